/**
 * File and data parts delivered into a session in a form its harness can use (amendments,
 * "client reach"): inline bytes are written under the session's working directory, in
 * `.shrooms/inbox/<task>/`, which the delivered text names; data parts are shown as JSON; URLs are
 * listed and never fetched — the worker decides whether to open them.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Message } from '@shrooms/protocol';

/** Where a task's files go, relative to the session's working directory. */
export const INBOX_DIR = join('.shrooms', 'inbox');

/** A file or folder name made safe: no separators, no `..`, no control characters, ≤ 100 chars. */
export function safeName(raw: string): string {
  // eslint-disable-next-line no-control-regex
  const s = basename(raw.replace(/\\/g, '/')).replace(/[\u0000-\u001f\u007f/:*?"<>|]/g, '_');
  const t = s.replace(/^\.+/, '_').slice(0, 100);
  return t || '_';
}

/**
 * Writes the message's inline files under `cwd` and returns the lines that tell the session about
 * every non-text part (empty when there are none).
 */
export async function deliverAttachments(cwd: string, taskId: string, message: Message | undefined): Promise<string[]> {
  const parts = message?.parts.filter((p) => p.text === undefined) ?? [];
  if (!parts.length) return [];
  const rel = join(INBOX_DIR, safeName(taskId));
  const lines: string[] = [];
  const used = new Set<string>();
  for (const [i, p] of parts.entries()) {
    const type = p.mediaType ? `, ${p.mediaType}` : '';
    if (p.raw !== undefined) {
      let name = safeName(p.filename ?? `part-${i + 1}.bin`);
      if (used.has(name)) name = `${i + 1}-${name}`;
      used.add(name);
      await mkdir(join(cwd, rel), { recursive: true });
      const bytes = Buffer.from(p.raw, 'base64');
      await writeFile(join(cwd, rel, name), bytes);
      lines.push(`- file ${join(rel, name)} (${bytes.length} bytes${type})`);
    } else if (p.url !== undefined) {
      lines.push(`- link ${p.url}${p.filename ? ` (${p.filename}${type})` : type ? ` (${type.slice(2)})` : ''} — not downloaded`);
    } else if (p.data !== undefined) {
      lines.push(`- data (JSON):\n${JSON.stringify(p.data, null, 2)}`);
    }
  }
  return [`Attached (files are under ${rel}/ in your working directory):`, ...lines];
}
