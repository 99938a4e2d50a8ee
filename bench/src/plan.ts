/**
 * How much of each measurement a run does. `quick` fits in under two minutes on two busy cores;
 * `full` is the one the committed report comes from.
 */
export interface Plan {
  mode: 'quick' | 'full';
  /** Repetitions of every measurement, arms interleaved within each (A, B, C, A, B, C …). */
  reps: number;
  warmup: { sends: number; streams: number; throughputMs: number };
  /** Blocking SendMessage, one at a time: requests per arm per repetition. */
  latencyN: number;
  throughput: { concurrency: number[]; durationMs: number; maxTasks: number; drainTimeoutMs: number };
  sseN: number;
  reads: {
    /** Tasks in the shelf session for the "small" and the "large" ledger. */
    small: number;
    large: number;
    n: number;
    /** Per arm per repetition: stop timing after this long (the reference's ListTasks sorts everything). */
    maxMs: number;
    pageSize: number;
    /** Before the reads of each ledger: wait until the machine's CPU is at most this busy over a window (see untilQuiet). */
    quiet: { maxBusyPct: number; windowMs: number; maxMs: number };
  };
  /** Blocking sends again once the large ledger is in place. */
  latencyLargeN: number;
  /** Sessions for the extra figure with the load spread over several (0: not measured). */
  spreadSessions: number;
  /**
   * The memory job: a fresh gateway started on a ledger retaining each of these many tasks; idle
   * processes read after `idleMs` without work.
   */
  memory: { retained: number[]; idleMs: number };
}

export const PLANS: Record<Plan['mode'], Plan> = {
  quick: {
    mode: 'quick',
    reps: 3,
    warmup: { sends: 100, streams: 20, throughputMs: 400 },
    latencyN: 120,
    throughput: { concurrency: [16, 64], durationMs: 700, maxTasks: 2_000, drainTimeoutMs: 30_000 },
    sseN: 50,
    reads: { small: 1_000, large: 10_000, n: 100, maxMs: 1_500, pageSize: 50, quiet: { maxBusyPct: 15, windowMs: 500, maxMs: 5_000 } },
    latencyLargeN: 60,
    spreadSessions: 0,
    memory: { retained: [1_000, 10_000], idleMs: 30_000 },
  },
  full: {
    mode: 'full',
    reps: 5,
    warmup: { sends: 300, streams: 50, throughputMs: 1_500 },
    latencyN: 400,
    throughput: { concurrency: [16, 64], durationMs: 3_000, maxTasks: 20_000, drainTimeoutMs: 120_000 },
    sseN: 200,
    reads: { small: 1_000, large: 100_000, n: 400, maxMs: 6_000, pageSize: 50, quiet: { maxBusyPct: 10, windowMs: 1_000, maxMs: 60_000 } },
    latencyLargeN: 200,
    spreadSessions: 4,
    // 90 s: on a busy machine V8's memory reducer had not yet run at 45 s in some processes
    // (a bridge read 68-69 MB there, 59.5-60.5 once it had), so the idle figure flipped between runs.
    memory: { retained: [10_000, 100_000], idleMs: 90_000 },
  },
};
