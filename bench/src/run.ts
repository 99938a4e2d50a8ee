/**
 * One benchmark run: starts a nats-server and the three arms, warms them up, then measures each
 * figure with the arms interleaved (floor, reference, ours, floor, reference, ours …) so drift on a
 * shared machine hits all three alike, and returns everything latest.json holds.
 *
 * Over 300 lines: one run is one sequence of phases (each marked `// ----` in the order of the
 * report) that share the arms, the interleaving, the noise meter and the figures being filled.
 */
import type { Aim } from './aims.js';
import { startBenchNats } from './arms/nats.js';
import { MACHINE, OURS_SERVING, OURS_SESSIONS, startOurs, RAISED_LIMITS, type Admission, type Ours } from './arms/ours.js';
import { SHELF } from './arms/shelf.js';
import { startChild, type Child } from './child.js';
import { ARMS, Figures, type Arm, type Figure } from './figures.js';
import type { LatencyJob, LatencyResult, Op, Target, ThroughputJob, ThroughputResult } from './loadgen/jobs.js';
import {
  NoiseMeter,
  machineInfo,
  untilQuiet,
  type Settled,
  messagesPerSend,
  natsInByConnection,
  usage,
  type MachineInfo,
} from './machine.js';
import { MemorySampler, procMemoryMb } from './memory.js';
import type { Plan } from './plan.js';
import { median, round } from './stats.js';

export interface BenchResult {
  schema: 'shrooms-bench/1';
  run: {
    mode: Plan['mode'];
    startedAt: string;
    durationS: number;
    /** When `pnpm bench --memory` last put the memory job's figures in (after the run), if it did. */
    memoryAt?: string;
    reps: number;
    plan: Plan;
    /** How ours admitted new tasks, and how many admissions the run made (null: unreadable). */
    admission: { how: Admission; admits: number | null };
    raisedLimits: Record<string, string>;
    /** Ours' NATS logins: the deploy's users and permissions, as `up` gives them (absent: a run without users). */
    natsUsers?: { replyWindow: string };
    ledgerTasks: { small: number | null; large: number | null };
    /** How long the machine took to settle after each preload, before its reads (absent: runs before it waited). */
    readsSettled?: { small: Settled | null; large: Settled | null };
    probes: Record<string, { requestBytes: number; responseBytes: number }>;
    notes: string[];
  };
  machine: MachineInfo & { noise: ReturnType<NoiseMeter['stop']> };
  figures: Record<string, Figure>;
  memory: { peaksMb: Record<string, number>; marksMb: Record<string, Record<string, number>>; idleNodeProcessMb: number | null };
  /** Every aim of the issue, judged from the figures (aims.ts). */
  aims?: Aim[];
}

type Log = (line: string) => void;

/** The most the spread sessions' warm-up may take, whatever the first session's warm-up served. */
const SPREAD_WARMUP_CAP_MS = 60_000;

export async function runBench(plan: Plan, log: Log, admission: Admission = 'local'): Promise<BenchResult> {
  const startedAt = new Date();
  const t0 = Date.now();
  const step = (s: string) => log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${s}`);
  const notes: string[] = [];
  const machine = machineInfo();
  step(
    `machine: ${machine.cores} cores, node ${machine.node}, nats-server ${machine.natsServer}, load ${machine.loadavgAtStart.join(' ')}`,
  );

  // Its own server (never NATS_URL's), with users and permissions as `up` starts it.
  const bench = await startBenchNats(MACHINE, OURS_SESSIONS);
  const nats = bench.server;
  const children: Child[] = [];
  /** Every child is stopped at the end, also when another one failed to start. */
  const keep = <T extends Child>(p: Promise<T>) => p.then((c) => (children.push(c), c));
  let ours: Ours | undefined;
  try {
    const [o, reference, hop1, hop2, loadgen, idle] = await Promise.all([
      startOurs(bench, { admission, spread: plan.spreadSessions }).then((x) => (ours = x)),
      keep(startChild<{ url: string }>('reference', 'arms/reference-server.ts')),
      keep(startChild('floor hop1', 'arms/floor-responder.ts', ['hop1', nats.url], bench.adminEnv)),
      keep(startChild('floor hop2', 'arms/floor-responder.ts', ['hop2', nats.url], bench.adminEnv)),
      keep(startChild('loadgen', 'loadgen/main.ts', [], bench.adminEnv)),
      keep(startChild('idle', 'arms/idle.ts')),
    ]);
    ours = o;
    step(`started: ours ${o.url} (admission: ${admission}), reference ${reference.ready.url}, floor hops, load generator`);
    await new Promise((r) => setTimeout(r, 300));
    const idleNodeProcessMb = procMemoryMb(idle.pid)?.hwm ?? null;
    await idle.stop();

    const pids = (): Record<string, number> => ({
      ...Object.fromEntries(Object.entries(ours!.pids()).map(([k, v]) => [`ours_${k}`, v])),
      ...(ours!.mesh.bridges.get(SHELF)?.child.pid ? { ours_bridge_shelf: ours!.mesh.bridges.get(SHELF)!.child.pid! } : {}),
      reference_server: reference.pid,
      floor_hop1: hop1.pid,
      floor_hop2: hop2.pid,
      loadgen: loadgen.pid,
      ...(nats.pid ? { nats_server: nats.pid } : {}),
    });
    const memory = new MemorySampler(pids);
    memory.start();
    const noise = new NoiseMeter(() => [process.pid, ...Object.values(pids())]);

    const figures = new Figures();
    /** Serving processes of each arm (nats-server counts for the two arms that use it). */
    const armPids = (arm: Arm): number[] => {
      const p = pids();
      const natsPid = p.nats_server ? [p.nats_server] : [];
      if (arm === 'floor') return [p.floor_hop1!, p.floor_hop2!, ...natsPid];
      if (arm === 'reference') return [p.reference_server!];
      return [p.ours_gateway!, p.ours_bridge!, ...(p.ours_guard ? [p.ours_guard] : []), ...natsPid];
    };
    const natsIn = () => natsInByConnection(nats.monitorUrl);
    const natsPerTask: Record<'floor' | 'ours', Record<string, number>> = { floor: {}, ours: {} };
    const cpuByProcess: Record<string, number[]> = {};
    const cpuC1ByProcess: Record<string, number[]> = {};
    /** The usage of `arm`'s serving processes from now on, each under its report name ("ours: gateway"). */
    const armUsage = (arm: Arm) => {
      const names = Object.fromEntries(Object.entries(pids()).map(([k, v]) => [v, k]));
      return usage(
        Object.fromEntries(
          armPids(arm).map((pid) => [`${arm}: ${(names[pid] ?? String(pid)).replace(/^(ours|floor|reference)_/, '')}`, pid]),
        ),
      );
    };
    /** The arm's CPU ms per unit of work since `u` began (null for none), each process's into `into`. */
    const cpuPer = (u: ReturnType<typeof armUsage>, n: number, into: Record<string, number[]>): number | null => {
      const by = Object.entries(u.per(n));
      for (const [name, x] of by) {
        into[name] ??= [];
        if (n) into[name].push(x.cpuMs);
      }
      return n ? round(by.reduce((sum, [, x]) => sum + x.cpuMs, 0)) : null;
    };
    const SERVING: Record<'floor' | 'ours', RegExp> = { floor: /^bench floor hop/, ours: OURS_SERVING };
    const lat = (job: Omit<LatencyJob, 'type'>) => loadgen.call<LatencyResult>({ type: 'latency', ...job });
    const thr = (job: Omit<ThroughputJob, 'type'>) => loadgen.call<ThroughputResult>({ type: 'throughput', ...job });
    const http = (arm: 'reference' | 'ours', tenant?: string): Target =>
      arm === 'ours'
        ? { kind: 'http', url: tenant ? ours!.shelfUrl : ours!.url }
        : { kind: 'http', url: reference.ready.url, ...(tenant ? { tenant } : {}) };
    const probes: BenchResult['run']['probes'] = {};
    /** Sizes the floor's messages like ours' request and answer of the same operation. */
    const probe = async (name: string, op: Op, target: Target, extra: Partial<LatencyJob> = {}) => {
      const r = await lat({ target, op, n: 3, maxMs: 30_000, ...extra });
      if (!r.samples.length) throw new Error(`probe ${name} failed: ${r.firstError}`);
      probes[name] = { requestBytes: r.requestBytes, responseBytes: r.responseBytes };
    };
    const floor = (name: string): Target => ({
      kind: 'nats',
      url: nats.url,
      requestBytes: probes[name]!.requestBytes,
      replyBytes: probes[name]!.responseBytes,
    });
    const target = (arm: Arm, probeName: string, tenant?: string): Target => (arm === 'floor' ? floor(probeName) : http(arm, tenant));

    // ---- warm-up ----------------------------------------------------------------------------
    await probe('send', 'send', http('ours'));
    await probe('send_nb', 'send_nb', http('ours'));
    await probe('stream', 'stream', http('ours'));
    /** Concurrency 16 for the warm-up's time, on one target. */
    const warm = (t: Target) =>
      thr({ target: t, op: 'send', concurrency: 16, durationMs: plan.warmup.throughputMs, maxTasks: 100_000, drainTimeoutMs: 0 });
    /** Tasks the first session of ours served in its warm-up. */
    let oursWarmed = 0;
    for (const arm of ARMS) {
      const sends = await lat({ target: target(arm, 'send'), op: 'send', n: plan.warmup.sends, maxMs: 60_000 });
      const streams = await lat({ target: target(arm, 'send'), op: 'stream', n: plan.warmup.streams, maxMs: 60_000 });
      const load = await warm(target(arm, 'send'));
      if (arm === 'ours') oursWarmed = sends.samples.length + streams.samples.length + load.done;
    }
    // The sessions the spread figure adds get a warm-up of their own, as long as the first session's
    // in tasks: each of their bridges serves as many before it is measured. Given only the warm-up's
    // time, four bridges shared what one had, and the figure measured their code still being
    // optimised (V8's compiler led their CPU profile) rather than the path.
    if (ours.spreadUrls.length > 1)
      await thr({
        target: { kind: 'http', url: ours.url, urls: ours.spreadUrls },
        op: 'send',
        concurrency: 16,
        durationMs: SPREAD_WARMUP_CAP_MS,
        maxTasks: oursWarmed * ours.spreadUrls.length,
        drainTimeoutMs: 0,
      });
    step('warmed up');
    noise.start();

    // ---- blocking SendMessage latency, concurrency 1 -----------------------------------------
    for (let rep = 0; rep < plan.reps; rep++) {
      for (const arm of ARMS) {
        const before = arm === 'reference' ? {} : await natsIn();
        const used = armUsage(arm);
        const r = await lat({ target: target(arm, 'send'), op: 'send', n: plan.latencyN, maxMs: 120_000 });
        figures.latency('send_blocking_c1', 'blocking SendMessage latency at concurrency 1', arm, r);
        const sent = r.samples.length + r.errors;
        figures.single(
          'cpu_ms_per_send_c1',
          'CPU time of the serving processes per blocking send at concurrency 1 (nats-server included for floor and ours)',
          'ms',
          arm,
          cpuPer(used, sent, cpuC1ByProcess),
        );
        if (arm === 'reference') continue;
        const perSend = messagesPerSend(before, await natsIn(), SERVING[arm], r.samples.length + r.errors);
        for (const [name, n] of Object.entries(perSend)) natsPerTask[arm][name] = (natsPerTask[arm][name] ?? 0) + n / plan.reps;
      }
    }
    for (const arm of ['floor', 'ours'] as const) {
      const total = Object.values(natsPerTask[arm]).reduce((a, b) => a + b, 0);
      figures.single(
        'nats_messages_per_blocking_send',
        "NATS messages the serving processes publish per blocking send (requests, replies, KV reads and writes; from the server's connz)",
        'msgs',
        arm,
        round(total),
      );
    }
    figures.context('cpu_ms_per_send_c1', {
      byProcess: Object.fromEntries(Object.entries(cpuC1ByProcess).map(([k, v]) => [k, round(median(v))])),
    });
    figures.context('nats_messages_per_blocking_send', {
      byConnection: Object.fromEntries(Object.entries({ ...natsPerTask.floor, ...natsPerTask.ours }).map(([k, v]) => [k, round(v)])),
    });
    step('blocking latency done');

    // ---- tasks/s at concurrency 16 and 64, blocking and not ---------------------------------
    for (const c of plan.throughput.concurrency) {
      for (const op of ['send', 'send_nb'] as const) {
        const mode = op === 'send' ? 'blocking' : 'nonblocking';
        for (let rep = 0; rep < plan.reps; rep++) {
          for (const arm of ARMS) {
            const used = armUsage(arm);
            const r = await thr({
              target: target(arm, op),
              op,
              concurrency: c,
              durationMs: plan.throughput.durationMs,
              maxTasks: plan.throughput.maxTasks,
              drainTimeoutMs: plan.throughput.drainTimeoutMs,
            });
            figures.throughput(`tasks_per_s_c${c}_${mode}`, `tasks/s at concurrency ${c}, ${mode} SendMessage`, arm, r);
            if (c === plan.throughput.concurrency[0] && op === 'send') {
              figures.single(
                'cpu_ms_per_task',
                `CPU time of the serving processes per blocking task at concurrency ${c} (nats-server included for floor and ours)`,
                'ms',
                arm,
                cpuPer(used, r.done, cpuByProcess),
              );
            }
            if (op === 'send_nb')
              figures.throughput(
                `drained_tasks_per_s_c${c}_nonblocking`,
                `tasks/s at concurrency ${c}, non-blocking, counted until every accepted task finished`,
                arm,
                r,
                r.drainedPerS ?? null,
              );
          }
        }
        step(`throughput c=${c} ${mode} done`);
      }
    }

    figures.context('cpu_ms_per_task', {
      byProcess: Object.fromEntries(Object.entries(cpuByProcess).map(([k, v]) => [k, round(median(v))])),
    });

    // ---- the same load spread over several sessions (ours); one endpoint for the others -----------
    for (const cSpread of ours.spreadUrls.length > 1 ? plan.throughput.concurrency : []) {
      for (let rep = 0; rep < plan.reps; rep++) {
        for (const arm of ARMS) {
          const t: Target = arm === 'ours' ? { kind: 'http', url: ours.url, urls: ours.spreadUrls } : target(arm, 'send');
          const r = await thr({
            target: t,
            op: 'send',
            concurrency: cSpread,
            durationMs: plan.throughput.durationMs,
            maxTasks: plan.throughput.maxTasks,
            drainTimeoutMs: 0,
          });
          figures.throughput(
            `tasks_per_s_c${cSpread}_blocking_${ours.spreadUrls.length}_sessions`,
            `tasks/s at concurrency ${cSpread}, blocking, ours spread over ${ours.spreadUrls.length} sessions (one endpoint for the others)`,
            arm,
            r,
          );
        }
      }
    }
    if (ours.spreadUrls.length > 1) step(`throughput over ${ours.spreadUrls.length} sessions done`);

    // ---- SSE first event ----------------------------------------------------------------------
    for (let rep = 0; rep < plan.reps; rep++) {
      for (const arm of ARMS)
        figures.latency(
          'sse_first_event',
          'SendStreamingMessage: time to the first SSE event',
          arm,
          await lat({ target: target(arm, 'stream'), op: 'stream', n: plan.sseN, maxMs: 120_000 }),
        );
    }
    step('SSE done');

    // ---- GetTask and ListTasks with a small and a large ledger ---------------------------------
    const ledgerTasks: BenchResult['run']['ledgerTasks'] = { small: null, large: null };
    const readsSettled: NonNullable<BenchResult['run']['readsSettled']> = { small: null, large: null };
    let loaded = 0;
    for (const size of ['small', 'large'] as const) {
      const want = plan.reads[size];
      const tp = Date.now();
      await Promise.all([
        ours.preload(loaded, want - loaded),
        reference.call({ type: 'preload', tenant: SHELF, from: loaded, count: want - loaded }),
      ]);
      loaded = want;
      await waitIndexed(ours, want);
      const total = (await ours.ledger.kv.status()).values;
      ledgerTasks[size] = total;
      step(`preloaded ${want} shelf tasks in ${((Date.now() - tp) / 1000).toFixed(1)} s (ledger holds ${total})`);
      const settled = await untilQuiet(plan.reads.quiet);
      step(
        `the machine ${settled.quiet ? 'settled' : 'did not settle'} in ${(settled.waitedMs / 1000).toFixed(1)} s (CPU ${settled.busyPct}% in the last ${plan.reads.quiet.windowMs} ms)`,
      );
      readsSettled[size] = settled;
      await probe(`get_${size}`, 'get', http('ours', SHELF), { shelf: want });
      await probe(`list_${size}`, 'list', http('ours', SHELF), { shelf: want, pageSize: plan.reads.pageSize });
      for (const [op, name] of [
        ['get', 'get_task'],
        ['list', 'list_tasks'],
      ] as const) {
        for (let rep = 0; rep < plan.reps; rep++) {
          for (const arm of ARMS) {
            const r = await lat({
              target: target(arm, `${op}_${size}`, SHELF),
              op,
              n: plan.reads.n,
              maxMs: plan.reads.maxMs,
              shelf: want,
              pageSize: plan.reads.pageSize,
            });
            figures.latency(
              `${name}_${size}`,
              `${op === 'get' ? 'GetTask' : `ListTasks (one page of ${plan.reads.pageSize})`} latency, ${want.toLocaleString('en')} tasks in the session`,
              arm,
              r,
            );
          }
        }
        for (const q of ['p50', 'p90', 'p99']) figures.context(`${name}_${size}_${q}_ms`, { sessionTasks: want, ledgerTasks: total });
      }
      // Marked after the reads, not right after the preload: the gateway has had time to collect
      // what following the burst of writes cost, so the mark shows what it keeps.
      memory.mark(`after_${size}_preload`);
      step(`reads with ${size} ledger done`);
    }

    // ---- blocking sends again on the large ledger ----------------------------------------------
    for (let rep = 0; rep < plan.reps; rep++) {
      for (const arm of ARMS)
        figures.latency(
          'send_blocking_c1_large',
          'blocking SendMessage latency at concurrency 1, after the large preload',
          arm,
          await lat({ target: target(arm, 'send'), op: 'send', n: plan.latencyLargeN, maxMs: 60_000 }),
        );
    }
    const noiseResult = noise.stop();
    step(`blocking latency on the large ledger done; other processes used ${noiseResult.otherPct}% of the machine`);

    // ---- memory --------------------------------------------------------------------------------
    const peaks = memory.peaks();
    const oursTotal = (peaks.ours_gateway ?? 0) + (peaks.ours_bridge ?? 0) + (peaks.ours_guard ?? 0);
    figures.single(
      'peak_rss_mb',
      'peak RSS (VmHWM) of the serving processes (ours: gateway + bridge' +
        (admission === 'service' ? ' + guard' : '') +
        '; reference: its server; floor: both hops)',
      'MB',
      'floor',
      round((peaks.floor_hop1 ?? 0) + (peaks.floor_hop2 ?? 0)),
    );
    figures.single('peak_rss_mb', '', 'MB', 'reference', peaks.reference_server ?? null);
    figures.single('peak_rss_mb', '', 'MB', 'ours', round(oursTotal));
    figures.single('peak_rss_gateway_mb', 'peak RSS of the gateway', 'MB', 'ours', peaks.ours_gateway ?? null);
    figures.single('peak_rss_bridge_mb', 'peak RSS of the bridge', 'MB', 'ours', peaks.ours_bridge ?? null);
    for (const size of ['small', 'large'] as const) {
      const m = memory.marks[`after_${size}_preload`] ?? {};
      figures.single(
        `rss_after_${size}_ledger_mb`,
        `RSS after the ${size} preload and its reads (${plan.reads[size].toLocaleString('en')} shelf tasks)`,
        'MB',
        'reference',
        m.reference_server ?? null,
      );
      figures.single(`rss_after_${size}_ledger_mb`, '', 'MB', 'ours', round((m.ours_gateway ?? 0) + (m.ours_bridge ?? 0)));
      figures.context(`rss_after_${size}_ledger_mb`, { ours_gateway: m.ours_gateway, ours_bridge: m.ours_bridge });
    }

    // ---- a bridge starting on a session with the large history ----------------------------------
    const tb = Date.now();
    const shelfBridge = await ours.mesh.startBridge(SHELF, 'echo', bench.users.sessionLogin(SHELF));
    const readyMs = Date.now() - tb;
    await new Promise((r) => setTimeout(r, 500));
    const shelfPeak = procMemoryMb(shelfBridge.child.pid!)?.hwm ?? null;
    figures.single(
      'bridge_start_large_session_ms',
      `a bridge starting on a session of ${plan.reads.large.toLocaleString('en')} finished tasks: process start to ready`,
      'ms',
      'ours',
      readyMs,
    );
    figures.single('bridge_start_large_session_peak_rss_mb', `peak RSS of that bridge`, 'MB', 'ours', shelfPeak);
    step(`bridge on the shelf session ready in ${readyMs} ms, peak RSS ${shelfPeak} MB`);

    const admits = await ours.admits();
    memory.stop();
    return {
      schema: 'shrooms-bench/1',
      run: {
        mode: plan.mode,
        startedAt: startedAt.toISOString(),
        durationS: Math.round((Date.now() - t0) / 1000),
        reps: plan.reps,
        plan,
        admission: { how: admission, admits },
        raisedLimits: RAISED_LIMITS,
        natsUsers: { replyWindow: bench.replyWindow },
        ledgerTasks,
        readsSettled,
        probes,
        notes,
      },
      machine: { ...machine, noise: noiseResult },
      figures: figures.toJSON(),
      memory: { peaksMb: memory.peaks(), marksMb: memory.marks, idleNodeProcessMb },
    };
  } finally {
    await Promise.all(children.map((c) => c.stop().catch(() => {})));
    await ours?.stop().catch(() => {});
    await bench.stop();
  }
}

/** Waits until the gateway's index shows every preloaded task (ListTasks totalSize). */
async function waitIndexed(ours: Ours, n: number, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await fetch(ours.shelfUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageSize: 1 } }),
    }).then((r) => r.json() as Promise<{ result?: { totalSize: number } }>);
    if ((res.result?.totalSize ?? 0) >= n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the gateway did not index ${n} shelf tasks within ${timeoutMs} ms`);
}
