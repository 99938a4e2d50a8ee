/**
 * What this host says of another process by its pid: the one place a lock file or a signal that
 * names a pid (up's state folder, a bridge's session) is checked for a process still there.
 */
import { readFileSync } from 'node:fs';

/** The process runs (one of another user's too: EPERM still means it is there). */
export function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process's arguments include `arg` (a pid reused by another program does not);
 * undefined where the host does not say (no /proc: macOS) or the process is gone.
 */
export function pidHasArg(pid: number, arg: string): boolean | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(arg);
  } catch {
    return undefined;
  }
}
