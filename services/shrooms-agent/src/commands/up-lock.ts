/**
 * One `up` per state folder. A second `up` given the same folder started a second nats-server on
 * the same JetStream store, made the users' credentials again and, when it stopped, removed the
 * first one's local-mesh.json: the running mesh lost its joining file and its data had two writers.
 * `up` now holds `up.pid` in the folder from before it touches anything there until it exits; a
 * second one is refused, naming the first. A file whose process is gone (an `up` killed outright)
 * is taken over; on Linux so is one whose pid now belongs to a process that is not an `up`.
 */
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pidHasArg, pidRuns } from '@shrooms/runtime';

export const UP_LOCK_FILE = 'up.pid';

/**
 * Takes the state folder `dir` for this process, or throws an Error saying which `up` holds it.
 * Returns the release (removes the file if it is still this process's; also run on exit).
 */
export function holdStateDir(dir: string, pid = process.pid): () => void {
  const file = join(dir, UP_LOCK_FILE);
  // Written whole under a name of its own, then linked: the lock's name never shows a partial file.
  const mine = `${file}.${pid}`;
  writeFileSync(mine, `${pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(mine, file);
        const release = () => {
          if (holder(file) === pid) rmSync(file, { force: true });
        };
        process.once('exit', release);
        return release;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const other = holder(file);
      if (other !== undefined && other !== pid && isUp(other))
        throw new Error(
          `another \`up\` (pid ${other}) runs with the state folder ${dir}: stop it first, or give this one a folder of its own (SHROOMS_STATE_DIR=…). ` +
            `If no \`up\` runs, remove ${file}.`,
        );
      takeOver(file, other, pid);
    }
  } finally {
    rmSync(mine, { force: true });
  }
  throw new Error(`cannot take the state folder ${dir}: ${file} keeps changing; is another \`up\` starting?`);
}

/**
 * Removes the lock file of `stale`, a process that is gone. Moved aside first and read again: when
 * another `up` took it over in between, the file moved is that one's, and it is put back.
 */
function takeOver(file: string, stale: number | undefined, pid: number): void {
  const aside = `${file}.stale-${pid}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    if (holder(aside) !== stale) linkSync(aside, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(aside, { force: true });
  }
}

function holder(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The process runs, and (where /proc tells) is an `up`: a pid reused by something else is not. */
function isUp(pid: number): boolean {
  // No /proc (macOS): a live pid is taken at its word.
  return pidRuns(pid) && (pidHasArg(pid, 'up') ?? true);
}
