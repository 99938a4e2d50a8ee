/**
 * `pnpm bench --hot`: ours alone, only what one change to the hot path moves — NATS messages per
 * blocking send (the server's per-connection counters), blocking p50 and SSE first event p50 at
 * concurrency 1 with each process's CPU per send there (at concurrency 1 the latency is mostly the
 * CPU the path spends, process after process), tasks/s and CPU and system calls per task (by
 * process) at concurrency 16. About a minute; no floor, no reference, no memory job,
 * so its figures are for an A/B of two trees or two settings run alternately on the same machine,
 * never for the aims (those come from the full run, arms interleaved).
 */
import { startBenchNats } from './arms/nats.js';
import { MACHINE, OURS_SERVING, OURS_SESSIONS, startOurs, type Admission } from './arms/ours.js';
import { startChild } from './child.js';
import type { LatencyResult, ThroughputResult } from './loadgen/jobs.js';
import { loadavgNow, messagesPerSend, natsInByConnection, usage, type Usage } from './machine.js';
import { median, percentiles, round } from './stats.js';

export interface HotResult {
  schema: 'shrooms-bench-hot/1';
  startedAt: string;
  reps: number;
  admission: Admission;
  /** Sessions the throughput is spread over (latency always goes to the first). */
  sessions: number;
  loadavg: number[];
  natsMessagesPerSend: number | null;
  natsMessagesByConnection: Record<string, number | null>;
  sendP50Ms: number | null;
  sseFirstP50Ms: number | null;
  tasksPerS: number | null;
  cpuMsPerTask: number | null;
  cpuMsPerTaskByProcess: Record<string, number | null>;
  /** System calls per task at concurrency 16 by process (socket reads and writes, most of them). */
  syscallsPerTaskByProcess: Record<string, { writes: number | null; reads: number | null }>;
  /** CPU ms per blocking send at concurrency 1 by process (the p50's sends). */
  c1CpuMsPerSendByProcess: Record<string, number | null>;
}

export async function runHot(
  opts: { reps: number; sends: number; throughputMs: number; admission: Admission; sessions: number },
  log: (l: string) => void,
): Promise<HotResult> {
  const nats = await startBenchNats(MACHINE, OURS_SESSIONS);
  const ours = await startOurs(nats, { admission: opts.admission, spread: opts.sessions });
  const loadgen = await startChild('loadgen', 'loadgen/main.ts', [], nats.adminEnv);
  try {
    const target = { kind: 'http' as const, url: ours.url };
    const lat = (n: number, op: 'send' | 'stream' = 'send') =>
      loadgen.call<LatencyResult>({ type: 'latency', target, op, n, maxMs: 120_000 });
    const thr = (durationMs: number) =>
      loadgen.call<ThroughputResult>({
        type: 'throughput',
        target: opts.sessions > 1 ? { ...target, urls: ours.spreadUrls } : target,
        op: 'send',
        concurrency: 16,
        durationMs,
        maxTasks: 100_000,
        drainTimeoutMs: 0,
      });
    await lat(opts.sends);
    await lat(opts.sends, 'stream');
    await thr(opts.throughputMs);
    log('warmed up');
    const serving = () => ({ ...ours.pids(), ...(nats.server.pid ? { nats_server: nats.server.pid } : {}) });
    const p50s: (number | null)[] = [];
    const sseP50s: (number | null)[] = [];
    const rates: number[] = [];
    const c16: Record<string, Usage>[] = [];
    const c1: Record<string, Usage>[] = [];
    const msgs: Record<string, number[]> = {};
    for (let rep = 0; rep < opts.reps; rep++) {
      const before = await natsInByConnection(nats.server.monitorUrl);
      const atC1 = usage(serving());
      const l = await lat(opts.sends);
      c1.push(atC1.per(l.samples.length + l.errors));
      const perSend = messagesPerSend(before, await natsInByConnection(nats.server.monitorUrl), OURS_SERVING, l.samples.length + l.errors);
      for (const [name, n] of Object.entries(perSend)) (msgs[name] ??= []).push(n);
      p50s.push(percentiles(l.samples).p50);
      sseP50s.push(percentiles((await lat(opts.sends, 'stream')).samples).p50);
      const atC16 = usage(serving());
      const t = await thr(opts.throughputMs);
      rates.push(t.perS);
      if (t.done) c16.push(atC16.per(t.done));
      log(`rep ${rep + 1}: p50 ${round(p50s.at(-1) ?? null)} ms, SSE first ${round(sseP50s.at(-1) ?? null)} ms, ${round(t.perS)} tasks/s`);
    }
    const byConnection = Object.fromEntries(Object.entries(msgs).map(([k, v]) => [k, round(median(v))]));
    const byProcess = medianOf(c16, (u) => u.cpuMs);
    return {
      schema: 'shrooms-bench-hot/1',
      startedAt: new Date().toISOString(),
      reps: opts.reps,
      admission: opts.admission,
      sessions: opts.sessions,
      loadavg: loadavgNow(),
      natsMessagesPerSend: round(Object.values(byConnection).reduce<number>((a, b) => a + (b ?? 0), 0)),
      natsMessagesByConnection: byConnection,
      sendP50Ms: round(median(p50s)),
      sseFirstP50Ms: round(median(sseP50s)),
      tasksPerS: round(median(rates)),
      cpuMsPerTask: round(Object.values(byProcess).reduce<number>((a, b) => a + (b ?? 0), 0)),
      cpuMsPerTaskByProcess: byProcess,
      syscallsPerTaskByProcess: syscallsOf(c16),
      c1CpuMsPerSendByProcess: medianOf(c1, (u) => u.cpuMs),
    };
  } finally {
    await loadgen.stop().catch(() => {});
    await ours.stop().catch(() => {});
    await nats.stop();
  }
}

/** Each process's read and write system calls per task, medians over the repetitions. */
function syscallsOf(reps: Record<string, Usage>[]): HotResult['syscallsPerTaskByProcess'] {
  const writes = medianOf(reps, (u) => u.writes);
  const reads = medianOf(reps, (u) => u.reads);
  return Object.fromEntries(Object.keys(writes).map((k) => [k, { writes: writes[k] ?? null, reads: reads[k] ?? null }]));
}

/** Each process's median over the repetitions of one figure of its usage. */
function medianOf(reps: Record<string, Usage>[], figure: (u: Usage) => number): Record<string, number | null> {
  const names = [...new Set(reps.flatMap((r) => Object.keys(r)))];
  return Object.fromEntries(names.map((name) => [name, round(median(reps.flatMap((r) => (r[name] ? [figure(r[name])] : []))))]));
}
