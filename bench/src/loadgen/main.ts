/**
 * The load generator: its own process, so its work does not share an event loop with anything it
 * measures. It takes one job at a time over IPC (see jobs.ts): a latency job times requests one by
 * one; a throughput job keeps `concurrency` requests in flight on as many keep-alive sockets for a
 * fixed time. It reports its own CPU use so a figure limited by the generator shows as such.
 */
import { serve } from '../child.js';
import { RpcClient } from './http.js';
import type { HttpTarget, LatencyJob, LatencyResult, ThroughputJob, ThroughputResult } from './jobs.js';
import { closeAll, floorCount, makeCall, type Outcome } from './ops.js';

function cpuPct(cpu0: NodeJS.CpuUsage, wallMs: number): number {
  const d = process.cpuUsage(cpu0);
  return wallMs > 0 ? Math.round(((d.user + d.system) / 1000 / wallMs) * 1000) / 10 : 0;
}

async function latency(job: LatencyJob): Promise<LatencyResult> {
  const { call, close } = await makeCall(job.target, job.op, { shelf: job.shelf, pageSize: job.pageSize, sockets: 1 });
  const samples: number[] = [];
  const totals: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let requestBytes = 0;
  let responseBytes = 0;
  const minN = job.minN ?? 5;
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  try {
    for (let i = 0; i < job.n; i++) {
      if (performance.now() - w0 > job.maxMs && samples.length >= minN) break;
      const t0 = performance.now();
      let o: Outcome;
      try {
        o = await call(t0);
      } catch (err) {
        o = { ok: false, error: String(err), requestBytes: 0, responseBytes: 0 };
      }
      const dt = performance.now() - t0;
      if (!o.ok) {
        errors++;
        firstError ??= o.error;
        if (errors > 20 && samples.length === 0) break;
        continue;
      }
      if (!requestBytes) {
        requestBytes = o.requestBytes;
        responseBytes = o.responseBytes;
      }
      samples.push(job.op === 'stream' ? o.firstMs! : dt);
      if (job.op === 'stream') totals.push(dt);
    }
  } finally {
    close();
  }
  return {
    samples,
    errors,
    ...(firstError ? { firstError } : {}),
    requestBytes,
    responseBytes,
    cpuPct: cpuPct(cpu0, performance.now() - w0),
    ...(job.op === 'stream' ? { totals } : {}),
  };
}

async function throughput(job: ThroughputJob): Promise<ThroughputResult> {
  const { call, close } = await makeCall(job.target, job.op, { sockets: job.concurrency });
  const floorBefore = job.op === 'send_nb' && job.target.kind === 'nats' ? await floorCount(job.target.url) : 0;
  let started = 0;
  let done = 0;
  let errors = 0;
  let firstError: string | undefined;
  const accepted: string[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const stopAt = t0 + job.durationMs;
  async function worker(): Promise<void> {
    while (performance.now() < stopAt && started < job.maxTasks) {
      started++;
      let o: Outcome;
      try {
        o = await call(performance.now());
      } catch (err) {
        o = { ok: false, error: String(err), requestBytes: 0, responseBytes: 0 };
      }
      if (o.ok) {
        done++;
        if (o.taskId) accepted.push(o.taskId);
      } else {
        errors++;
        firstError ??= o.error;
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: job.concurrency }, worker));
  } finally {
    close();
  }
  const elapsedMs = performance.now() - t0;
  const out: ThroughputResult = {
    done,
    errors,
    ...(firstError ? { firstError } : {}),
    elapsedMs,
    perS: (done / elapsedMs) * 1000,
    cpuPct: cpuPct(cpu0, elapsedMs),
  };
  if (job.op === 'send_nb') {
    const until = performance.now() + job.drainTimeoutMs;
    const finishedAt =
      job.target.kind === 'nats'
        ? await floorDrained(job.target.url, floorBefore + done, until)
        : await httpDrained(job.target, accepted, until);
    out.drainedMs = finishedAt === null ? null : finishedAt - t0;
    out.drainedPerS = finishedAt === null ? null : (done / (finishedAt - t0)) * 1000;
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function floorDrained(url: string, target: number, until: number): Promise<number | null> {
  while (performance.now() < until) {
    if ((await floorCount(url)) >= target) return performance.now();
    await sleep(2);
  }
  return null;
}

const FINISHED = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_INPUT_REQUIRED',
]);

/**
 * When every accepted task is finished: polls the last one accepted (the queue is first come,
 * first served), then checks all of them and keeps polling any straggler.
 */
async function httpDrained(target: HttpTarget, ids: string[], until: number): Promise<number | null> {
  if (ids.length === 0) return performance.now();
  const client = new RpcClient(target.url, 16);
  const tenant = target.tenant ? { tenant: target.tenant } : {};
  const finished = async (id: string) => {
    const r = await client.call(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { ...tenant, id, historyLength: 0 } }));
    return FINISHED.has(JSON.parse(r.body)?.result?.status?.state);
  };
  try {
    let seenAt: number | null = null;
    const last = ids[ids.length - 1]!;
    while (performance.now() < until) {
      if (await finished(last)) {
        seenAt = performance.now();
        break;
      }
      await sleep(2);
    }
    if (seenAt === null) return null;
    let pending = ids.slice(0, -1);
    let stragglers = false;
    while (pending.length && performance.now() < until) {
      const still: string[] = [];
      for (let i = 0; i < pending.length; i += 16) {
        const batch = pending.slice(i, i + 16);
        const states = await Promise.all(batch.map(finished));
        batch.forEach((id, k) => !states[k] && still.push(id));
      }
      if (still.length === 0) {
        // Stragglers finished after the last task did: they end the drain, seen now.
        if (stragglers) seenAt = performance.now();
        break;
      }
      pending = still;
      stragglers = true;
      await sleep(2);
    }
    return pending.length && performance.now() >= until ? null : seenAt;
  } finally {
    client.close();
  }
}

serve(
  async function job(m) {
    if (m.type === 'latency') return latency(m as unknown as LatencyJob);
    if (m.type === 'throughput') return throughput(m as unknown as ThroughputJob);
    if (m.type === 'close') return closeAll();
    throw new Error(`unknown job ${m.type}`);
  },
  { pid: process.pid },
);
