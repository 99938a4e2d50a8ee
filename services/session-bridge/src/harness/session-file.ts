/**
 * Which conversation a session continues, as each adapter keeps it between starts:
 * `stateDir/<kind>-session.json` (claude, pi, acp). A file that is missing or unreadable reads as
 * none: the session starts a new conversation.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface SessionFile<T> {
  readonly path: string;
  read(): Promise<T | undefined>;
  write(value: T): Promise<void>;
}

export function sessionFile<T>(stateDir: string, kind: 'claude' | 'pi' | 'acp'): SessionFile<T> {
  const path = join(stateDir, `${kind}-session.json`);
  return {
    path,
    read: () =>
      readFile(path, 'utf8').then(
        (t) => JSON.parse(t) as T,
        () => undefined,
      ),
    write: (value) => writeFile(path, JSON.stringify(value)),
  };
}
