/**
 * The policy file: read at start (a bad file stops the guard), then again after every change. A
 * reload never widens access by accident — a file caught while an editor or `cp` is writing it
 * (empty, or not yet parsing) must not become an open policy — so a change is applied only when it
 * reads and parses, and the policy in force stays, with a warning saying why, when the file:
 * - cannot be read (missing for a moment while an editor replaces it, or not permitted);
 * - holds no policy at all (empty, blanks or comments only) while the policy in force has rules:
 *   that is what a truncated file looks like. To open the policy on purpose, write `{}`;
 * - does not parse, or does not fit the schema.
 * At start an empty file is the empty policy (everyone on the mesh, as without a file), said in a
 * warning. Reloads run one at a time, so a slow read never overwrites a later one. A file caught
 * half-written that happens to parse cannot be told from an edit: replace the file whole (write a
 * new file beside it, then rename it over the old one; README, Policy file).
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from '@shrooms/runtime';
import { parse as parseYaml } from 'yaml';
import { PolicyFileSchema, type PolicyFile } from '@shrooms/protocol';
import { watchFile } from '@shrooms/runtime';

/** YAML or JSON (JSON is YAML); a text with no document is the empty policy. Throws with the file name and every problem. */
export function parsePolicy(text: string, origin = 'policy'): PolicyFile {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    throw new Error(`${origin}: not YAML or JSON: ${(err as Error).message}`, { cause: err });
  }
  const result = PolicyFileSchema.safeParse(raw);
  if (!result.success)
    throw new Error(`${origin}: ${result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return result.data;
}

/** The text holds no YAML document: empty, blanks or comments only (what a file truncated for a write holds). */
export function holdsNoPolicy(text: string): boolean {
  try {
    return (parseYaml(text) ?? null) === null;
  } catch {
    return false;
  }
}

export async function readPolicyFile(path: string): Promise<PolicyFile> {
  return parsePolicy(await readFile(path, 'utf8'), path);
}

export interface PolicyFileWatch {
  current(): PolicyFile;
  close(): void;
}

const hasRules = (p: PolicyFile) => Object.keys(p).length > 0;

/**
 * Reads the policy at `path` and follows its changes (`debounceMs` of quiet after the last one).
 * `onChange` gets each policy applied, `onRejected` each change refused (the policy in force stays).
 */
export async function loadPolicyFile(
  path: string,
  opts: { debounceMs: number; log: Logger; onChange?: (p: PolicyFile) => void; onRejected?: (err: Error) => void },
): Promise<PolicyFileWatch> {
  const log = opts.log.child({ policyFile: path });
  const first = await readFile(path, 'utf8');
  let policy = parsePolicy(first, path);
  if (holdsNoPolicy(first)) log.warn('policy file is empty: everyone on the mesh may give tasks, as without a policy file');
  else log.info({ sessions: Object.keys(policy.sessions ?? {}).length }, 'policy loaded');

  /** The next policy from the file, or why the one in force stays. */
  async function next(): Promise<PolicyFile> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new Error(`${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err });
    }
    if (holdsNoPolicy(text) && hasRules(policy))
      throw new Error(`${path}: is empty (caught while being written?); write {} to open the policy on purpose`);
    return parsePolicy(text, path);
  }

  let reading = false;
  let again = false;
  function reloadPolicy(): void {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    next()
      .then(
        (p) => {
          policy = p;
          log.info({ sessions: Object.keys(p.sessions ?? {}).length }, 'policy reloaded');
          opts.onChange?.(p);
        },
        (err: Error) => {
          log.warn({ why: err.message }, 'policy file not reloaded; keeping the last good policy');
          opts.onRejected?.(err);
        },
      )
      .finally(() => {
        reading = false;
        if (again) {
          again = false;
          reloadPolicy();
        }
      });
  }
  const stop = watchFile(path, opts.debounceMs, reloadPolicy);
  return { current: () => policy, close: stop };
}
