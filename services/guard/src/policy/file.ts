/**
 * The policy file: read at start (a bad file stops the guard), then again after every change. A
 * change that does not parse is logged and ignored: the last good policy stays in force.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from '@shrooms/runtime';
import { parse as parseYaml } from 'yaml';
import { PolicyFileSchema, type PolicyFile } from '@shrooms/protocol';
import { watchFile } from '@shrooms/runtime';

/** YAML or JSON (JSON is YAML). Throws with the file name and every problem. */
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

export async function readPolicyFile(path: string): Promise<PolicyFile> {
  return parsePolicy(await readFile(path, 'utf8'), path);
}

export interface PolicyFileWatch {
  current(): PolicyFile;
  close(): void;
}

export async function loadPolicyFile(
  path: string,
  opts: { debounceMs: number; log: Logger; onChange?: (p: PolicyFile) => void; onRejected?: (err: Error) => void },
): Promise<PolicyFileWatch> {
  let policy = await readPolicyFile(path);
  const log = opts.log.child({ policyFile: path });
  log.info({ sessions: Object.keys(policy.sessions ?? {}).length }, 'policy loaded');
  const stop = watchFile(path, opts.debounceMs, function reloadPolicy() {
    readPolicyFile(path).then(
      (next) => {
        policy = next;
        log.info({ sessions: Object.keys(next.sessions ?? {}).length }, 'policy reloaded');
        opts.onChange?.(next);
      },
      (err: unknown) => {
        log.error({ err: (err as Error).message }, 'policy file not reloaded; keeping the last good policy');
        opts.onRejected?.(err as Error);
      },
    );
  });
  return { current: () => policy, close: stop };
}
