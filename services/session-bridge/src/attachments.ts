/**
 * File and data parts placed where a session's harness can use them (amendments, "client reach"):
 * inline bytes are written under the session's working directory — a delivered task's in
 * `.shrooms/inbox/<task>/`, which the delivered text names; what a worker returned to the asker, in
 * `.shrooms/received/<task>/`, which ask_agent and task_status name — data parts are shown as JSON;
 * URLs are listed and never fetched: the session decides whether to open them.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Message, Part, Task } from '@shrooms/protocol';

/** Where a task's files go, relative to the session's working directory. */
export const INBOX_DIR = join('.shrooms', 'inbox');
/** Where the files a worker returned go, relative to the asking session's working directory. */
export const RECEIVED_DIR = join('.shrooms', 'received');

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
  return [`Attached (files are under ${rel}/ in your working directory):`, ...(await placeParts(cwd, rel, parts))];
}

/**
 * What the worker returned beside its words — the files, links and data of its result's artifact —
 * placed for the asking session: files written under `cwd` (a file that cannot be written is said,
 * not thrown: the answer still reaches the asker), and the lines that tell of each. Empty when the
 * task is not completed or returned nothing but text. `task` is its whole name (`MACHINE/SESSION:ID`).
 */
export async function receiveReturned(cwd: string, task: string, t: Task): Promise<string[]> {
  if (t.status.state !== 'TASK_STATE_COMPLETED') return [];
  const parts = t.artifacts?.at(-1)?.parts.filter((p) => p.text === undefined) ?? [];
  if (!parts.length) return [];
  const rel = join(RECEIVED_DIR, safeName(task.replace(/[/:]/g, '_')));
  return [`Returned with it (files are under ${rel}/ in your working directory):`, ...(await placeParts(cwd, rel, parts, true))];
}

/** One line for each part, writing the inline files under `cwd`/`rel`; `sayFailures`: a failed write is a line, not a throw. */
async function placeParts(cwd: string, rel: string, parts: Part[], sayFailures = false): Promise<string[]> {
  const lines: string[] = [];
  const used = new Set<string>();
  for (const [i, p] of parts.entries()) {
    const type = p.mediaType ? `, ${p.mediaType}` : '';
    if (p.raw !== undefined) {
      let name = safeName(p.filename ?? `part-${i + 1}.bin`);
      if (used.has(name)) name = `${i + 1}-${name}`;
      used.add(name);
      const bytes = Buffer.from(p.raw, 'base64');
      try {
        await mkdir(join(cwd, rel), { recursive: true });
        await writeFile(join(cwd, rel, name), bytes);
      } catch (err) {
        if (!sayFailures) throw err;
        lines.push(`- file ${join(rel, name)} (${bytes.length} bytes${type}) could not be written: ${(err as Error).message}`);
        continue;
      }
      lines.push(`- file ${join(rel, name)} (${bytes.length} bytes${type})`);
    } else if (p.url !== undefined) {
      lines.push(`- link ${p.url}${p.filename ? ` (${p.filename}${type})` : type ? ` (${type.slice(2)})` : ''} — not downloaded`);
    } else if (p.data !== undefined) {
      lines.push(`- data (JSON):\n${JSON.stringify(p.data, null, 2)}`);
    }
  }
  return lines;
}
