/**
 * What the kernel says about a process (Linux /proc): resident memory and open sockets. Chaos tests
 * read a service's RSS from outside instead of asking it, so nothing new has to be exposed.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';

/** Resident set size of `pid` in bytes (VmRSS), or undefined when the process is gone. */
export async function rssBytes(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const m = status?.match(/^VmRSS:\s+(\d+)\s+kB$/m);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** Open sockets of `pid` (TCP listeners, clients, the NATS connection), or undefined when gone. */
export async function socketCount(pid: number): Promise<number | undefined> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => undefined);
  if (!fds) return undefined;
  let n = 0;
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    if (target.startsWith('socket:')) n++;
  }
  return n;
}

/** The direct children of `pid` with their command lines (empty when it has none or is gone). */
export async function childProcesses(pid: number): Promise<{ pid: number; cmdline: string }[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const pids = new Set<number>();
  for (const t of tasks) {
    const list = await readFile(`/proc/${pid}/task/${t}/children`, 'utf8').catch(() => '');
    for (const c of list.split(/\s+/).filter(Boolean)) pids.add(Number(c));
  }
  const out: { pid: number; cmdline: string }[] = [];
  for (const c of pids) {
    const cmdline = await readFile(`/proc/${c}/cmdline`, 'utf8').catch(() => undefined);
    if (cmdline !== undefined) out.push({ pid: c, cmdline: cmdline.split('\0').join(' ').trim() });
  }
  return out;
}

export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export const mib = (bytes: number | undefined): string => (bytes === undefined ? '?' : `${(bytes / 1048576).toFixed(1)} MiB`);
