/**
 * Memory of the processes under test, from /proc/<pid>/status: VmHWM (the kernel's peak resident
 * set, the figure reported) and VmRSS sampled during the run (for the curve between phases); and
 * from /proc/<pid>/smaps_rollup, what a process holds alone.
 */
import { readFileSync } from 'node:fs';
import { kbIn } from '@shrooms/testing';
/** kB as MB to one decimal. */
const mb = (kb: number) => Math.round(kb / 102.4) / 10;

export function procMemoryMb(pid: number): { rss: number; hwm: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => kbIn(s, k);
    return { rss: mb(kb('VmRSS')), hwm: mb(kb('VmHWM')) };
  } catch {
    return null;
  }
}

/**
 * What the process alone holds, MB: its private pages (Private_Clean + Private_Dirty of
 * /proc/<pid>/smaps_rollup). RSS also counts the pages of the `node` binary and the libraries it
 * maps, which every Node process of the machine shares: a second process costs its private memory,
 * not its RSS. A page of the binary counts as shared only while another process maps it too (a lone
 * `node` on Node 22 reads about 41 MB private, nearly all of it the binary), so the figure means
 * what it says when read beside the machine's other Node processes, as the memory job reads it.
 */
export function privateMemoryMb(pid: number): number | null {
  try {
    const s = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k: string) => kbIn(s, k);
    const v = kb('Private_Clean') + kb('Private_Dirty');
    return Number.isFinite(v) ? mb(v) : null;
  } catch {
    return null;
  }
}

/** Samples VmRSS of named processes; `mark` keeps a labelled snapshot; `peaks` reads VmHWM. */
export class MemorySampler {
  private timer?: NodeJS.Timeout;
  private lastHwm = new Map<string, number>();
  readonly marks: Record<string, Record<string, number>> = {};

  constructor(private pids: () => Record<string, number>) {}

  start(everyMs = 250): void {
    this.timer = setInterval(() => this.peaks(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** VmHWM per process (kept after a process exits: the last value read). */
  peaks(): Record<string, number> {
    for (const [name, pid] of Object.entries(this.pids())) {
      const m = procMemoryMb(pid);
      if (m) this.lastHwm.set(name, m.hwm);
    }
    return Object.fromEntries(this.lastHwm);
  }

  mark(label: string): void {
    const snap: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids())) {
      const m = procMemoryMb(pid);
      if (m) snap[name] = m.rss;
    }
    this.marks[label] = snap;
  }
}
