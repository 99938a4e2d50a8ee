/**
 * Memory of the processes under test, from /proc/<pid>/status: VmHWM (the kernel's peak resident
 * set, the figure reported) and VmRSS sampled during the run (for the curve between phases).
 */
import { readFileSync } from 'node:fs';

export function procMemoryMb(pid: number): { rss: number; hwm: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
    return { rss: Math.round(kb('VmRSS') / 102.4) / 10, hwm: Math.round(kb('VmHWM') / 102.4) / 10 };
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
