/**
 * The machine the figures came from, and how busy other processes kept it: CPU time of the whole
 * machine (/proc/stat) minus the CPU time of the bench's own processes (/proc/<pid>/stat), over the
 * measuring part of the run.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { NATS_SERVER_ENV, natsServerBinary } from '@shrooms/testing';

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryGb: number;
  os: string;
  node: string;
  natsServer: string;
  loadavgAtStart: number[];
}

export function machineInfo(): MachineInfo {
  let nats = 'unknown';
  try {
    nats = execFileSync(natsServerBinary(), ['--version'], { encoding: 'utf8' })
      .trim()
      .replace(/^nats-server:\s*/, '');
  } catch {
    /* reported as unknown */
  }
  return {
    cores: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    // As the run's servers start (startNatsServer: its environment below this process's).
    natsServer: `${nats} (GOMAXPROCS ${process.env.GOMAXPROCS ?? NATS_SERVER_ENV.GOMAXPROCS})`,
    loadavgAtStart: loadavgNow(),
  };
}

interface CpuSnapshot {
  total: number;
  busy: number;
  steal: number;
  ours: number;
}

function machineTicks(): { total: number; busy: number; steal: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { total, busy: total - idle - iowait - steal, steal };
}

/** utime + stime of a process, in clock ticks (0 when it is gone). */
export function processTicks(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

/** Read and write system calls a process has made so far (all its threads), from /proc/PID/io. */
export function processSyscalls(pid: number): { reads: number; writes: number } {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? 0);
    return { reads: field('syscr'), writes: field('syscw') };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

/** What each process used between `usage()` and the `per(n)` it returns: CPU ms and system calls per unit of work. */
export interface Usage {
  cpuMs: number;
  writes: number;
  reads: number;
}

export function usage(pids: Record<string, number>): { per(n: number): Record<string, Usage> } {
  const snap = () =>
    Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, { ticks: processTicks(pid), ...processSyscalls(pid) }]));
  const before = snap();
  return {
    per(n) {
      const after = snap();
      return Object.fromEntries(
        Object.entries(after).map(([name, a]) => {
          const b = before[name]!;
          return [
            name,
            { cpuMs: ((a.ticks - b.ticks) * clockTickMs()) / n, writes: (a.writes - b.writes) / n, reads: (a.reads - b.reads) / n },
          ];
        }),
      );
    },
  };
}

/** `ticks` as a share of `total` ticks of the machine, in % to one decimal. */
const shareOf = (ticks: number, total: number): number => Math.round((ticks / (total || 1)) * 1000) / 10;

/** Measures, between `start()` and `stop()`, the share of the machine other processes used. */
export class NoiseMeter {
  private first?: CpuSnapshot;
  private base = new Map<number, number>();

  constructor(private pids: () => number[]) {}

  private snap(): CpuSnapshot {
    const m = machineTicks();
    let ours = 0;
    for (const pid of this.pids()) {
      const t = processTicks(pid);
      if (!this.base.has(pid)) this.base.set(pid, this.first ? 0 : t);
      ours += t - this.base.get(pid)!;
    }
    return { ...m, ours };
  }

  start(): void {
    this.first = undefined;
    this.base.clear();
    this.first = this.snap();
  }

  /** Shares of the machine's CPU capacity over the interval, in %. */
  stop(): { busyPct: number; benchPct: number; otherPct: number; stealPct: number; loadavg: number[] } {
    const a = this.first!;
    const b = this.snap();
    const pct = (x: number) => shareOf(x, b.total - a.total);
    const busy = b.busy - a.busy;
    const ours = b.ours - a.ours;
    return {
      busyPct: pct(busy),
      benchPct: pct(ours),
      otherPct: pct(Math.max(0, busy - ours)),
      stealPct: pct(b.steal - a.steal),
      loadavg: loadavgNow(),
    };
  }
}

/** What `untilQuiet` waited: how long, the machine's CPU share in its last window, and whether that was quiet. */
export interface Settled {
  waitedMs: number;
  busyPct: number;
  quiet: boolean;
}

/**
 * Waits until the whole machine's CPU was at most `maxBusyPct` of its capacity over one `windowMs`,
 * or `maxMs` passed: after a preload, the servers still collect and write what it left (the
 * reference's heap of a hundred thousand tasks, nats-server's file store), and reads taken then
 * measure that, in every arm alike. Returns how long it waited and the last window's share.
 */
export async function untilQuiet(opts: { maxBusyPct: number; windowMs: number; maxMs: number }): Promise<Settled> {
  const t0 = Date.now();
  for (;;) {
    const a = machineTicks();
    await new Promise((r) => setTimeout(r, opts.windowMs));
    const b = machineTicks();
    const busyPct = shareOf(b.busy - a.busy, b.total - a.total);
    const waitedMs = Date.now() - t0;
    if (busyPct <= opts.maxBusyPct || waitedMs >= opts.maxMs) return { waitedMs, busyPct, quiet: busyPct <= opts.maxBusyPct };
  }
}

let tickMs: number | undefined;
/** Milliseconds of CPU per clock tick of /proc/<pid>/stat (`getconf CLK_TCK`, 100 if unknown). */
export function clockTickMs(): number {
  if (tickMs === undefined) {
    let perS = 100;
    try {
      perS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      /* the usual 100 */
    }
    tickMs = 1000 / perS;
  }
  return tickMs;
}

/**
 * Messages each serving connection (its name matching `serving`) published between two connz
 * readings, per send; connections that were not there before are left out.
 */
export function messagesPerSend(
  before: Record<string, number>,
  after: Record<string, number>,
  serving: RegExp,
  sends: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, n] of Object.entries(after))
    if (serving.test(name) && before[name] !== undefined) out[name] = (n - before[name]!) / sends;
  return out;
}

/** The machine's load averages (1, 5, 15 min), two decimals. */
export const loadavgNow = (): number[] => os.loadavg().map((x) => Math.round(x * 100) / 100);

/** Messages each client has published to the nats-server so far (its in_msgs), by connection name. */
export async function natsInByConnection(monitorUrl: string | undefined): Promise<Record<string, number>> {
  if (!monitorUrl) return {};
  const c = (await (await fetch(`${monitorUrl}/connz?limit=1024`)).json()) as { connections: { name?: string; in_msgs: number }[] };
  return Object.fromEntries(c.connections.map((x) => [x.name ?? '?', x.in_msgs]));
}
