/**
 * What the kernel says about a process (Linux /proc): resident memory and open sockets. Chaos tests
 * read a service's RSS from outside instead of asking it, so nothing new has to be exposed.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, type ServiceProcess } from '../processes.js';

/**
 * A `Key:  N kB` line's N in the text of a /proc file that reads that way (status, smaps_rollup),
 * or NaN when the key is missing. The one parser of them for the tests and the bench.
 */
export function kbIn(text: string, key: string): number {
  return Number(new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text)?.[1] ?? NaN);
}

/** Resident set size of `pid` in bytes (VmRSS), or undefined when the process is gone. */
export async function rssBytes(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const kb = status === undefined ? NaN : kbIn(status, 'VmRSS');
  return Number.isNaN(kb) ? undefined : kb * 1024;
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

/**
 * Alive and not a zombie waiting to be reaped (Linux: /proc): an orphan whose reaper is slow (PID 1
 * of a container or VM) stays a zombie after it died, which `isAlive` still counts.
 */
export function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

export const mib = (bytes: number | undefined): string => (bytes === undefined ? '?' : `${(bytes / 1048576).toFixed(1)} MiB`);

/** The memory probe: start a service with `NODE_OPTIONS: --import ${MEMORY_PROBE}` to use `liveMemory`. */
export const MEMORY_PROBE = join(REPO_ROOT, 'libs', 'testing', 'src', 'chaos', 'memory-probe.mjs');

/** What a service still holds after two full garbage collections (bytes), and its libuv resources. */
export interface LiveMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  /** Memory outside V8's heap that JS objects hold (Buffers included). */
  external: number;
  arrayBuffers: number;
  /** Active libuv resources by kind (`TCPSocketWrap`, `Timeout`, …). */
  handles: Record<string, number>;
}

/** Asks a service started with MEMORY_PROBE for its live memory (SIGUSR2; the answer on stderr). */
export function liveMemory(proc: ServiceProcess, timeoutMs = 30_000): Promise<LiveMemory> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = /MEMPROBE (\{.*\})\n/.exec(buf);
      if (!m) return;
      done();
      resolve(JSON.parse(m[1]!) as LiveMemory);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no memory probe answer within ${timeoutMs} ms (was the service started with MEMORY_PROBE?)`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      proc.child.stderr?.off('data', onData);
    };
    proc.child.stderr?.on('data', onData);
    proc.child.kill('SIGUSR2');
  });
}
