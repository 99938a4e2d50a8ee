/**
 * The `memory` job: what our processes hold when nothing happens, what the gateway holds and how long
 * it takes to start when the ledger retains many tasks, and how long `up` takes from its start to
 * the first answered ask — each process run as people run it (the compiled CLI). Ours only: the
 * other arms have no such processes. Runs after the interleaved figures, on its own nats-server.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { Ledger } from '@shrooms/ledger';
import { CLI, freePort, nodeArgs, rpc, startMesh, wrap, type Mesh, type ServiceProcess } from '@shrooms/testing';
import { benchLogin } from './arms/login.js';
import { startBenchNats } from './arms/nats.js';
import { onInterrupt, stoppedOnInterrupt } from './interrupt.js';
import { MACHINE, RAISED_LIMITS, preloadShelf } from './arms/ours.js';
import { SHELF } from './arms/shelf.js';
import { BUILT, REPO_ROOT } from './child.js';
import { Figures } from './figures.js';
import { privateMemoryMb, procMemoryMb } from './memory.js';
import type { Plan } from './plan.js';
import { median } from './stats.js';

type Log = (line: string) => void;

/** How long a process is left alone before its resident memory is read (start-up garbage collected). */
const SETTLE_MS = 5_000;
const settle = (ms = SETTLE_MS) => new Promise((r) => setTimeout(r, ms));
/** Gateway starts per retained-task count; its start-up figure is their median. */
const GATEWAY_STARTS = 3;
/** Starts of `up`, each on a fresh state folder; its figures are their medians. */
const UP_STARTS = 3;
/** Idle sessions of the memory job: the bridge's figure is their median. */
const IDLE_BRIDGES = ['idle-1', 'idle-2', 'idle-3'];
const rssOf = (p: ServiceProcess | undefined) => (p?.child.pid ? (procMemoryMb(p.child.pid)?.rss ?? null) : null);
const privateOf = (p: ServiceProcess | undefined) => (p?.child.pid ? privateMemoryMb(p.child.pid) : null);

export async function runMemoryJob(plan: Plan, log: Log): Promise<Figures> {
  const figures = new Figures();
  await idleProcesses(plan.memory.idleMs, figures, log);
  await gatewayAtRetained(plan, figures, log);
  await upStartup(figures, log);
  return figures;
}

/**
 * Idle RSS of each of ours' processes: gateway (admitting in its process, as `up` runs it), guard
 * (for deployments that ask it: compose, k3s), scheduler and three bridges with the echo harness,
 * read SETTLE_MS after ready and again after `idleMs` without work — V8 gives back the young
 * generation's start-up growth only after some seconds of quiet (15–40 s here for the gateway and
 * the bridge on a quiet machine, whose timers keep them from being quiet sooner; over 45 s for some
 * on a busy one), so the first reading still holds start-up memory.
 */
async function idleProcesses(idleMs: number, figures: Figures, log: Log): Promise<void> {
  const nats = await startBenchNats(MACHINE, IDLE_BRIDGES);
  let mesh: Mesh | undefined;
  try {
    mesh = stoppedOnInterrupt(
      await startMesh({
        nats: nats.server,
        machine: MACHINE,
        sessions: IDLE_BRIDGES.map((name) => ({ name, env: nats.users.sessionLogin(name) })),
        guard: true,
        scheduler: true,
        env: { GATEWAY_GUARD: 'local' },
        serviceEnv: nats.serviceEnv,
        built: BUILT,
      }),
    );
    const m = mesh;
    const bridges = IDLE_BRIDGES.map((name) => m.bridges.get(name));
    const [guard, scheduler] = m.services.filter((s) => s !== m.gateway && !bridges.includes(s));
    // One reading of one process flips with V8's memory reducer; the bridge's is the median of three.
    const groups: [string, (ServiceProcess | undefined)[]][] = [
      ['gateway', [m.gateway]],
      ['bridge', bridges],
      ['guard', [guard]],
      ['scheduler', [scheduler]],
    ];
    const read = (key: string, of: typeof rssOf, what: (name: string) => string) => {
      // Each process read once: the bridges' readings give both their median and the log's list.
      const each = groups.map(([name, ps]) => [name, ps.map(of)] as const);
      for (const [name, mbs] of each)
        figures.single(
          `${key}_${name}_mb`,
          what(name === 'bridge' ? `bridge (median of ${bridges.length})` : name),
          'MB',
          'ours',
          median(mbs),
        );
      const ofBridges = each.find(([name]) => name === 'bridge')![1];
      return each.map(([n, mbs]) => `${n} ${median(mbs)} MB`).join(', ') + ` (bridges ${ofBridges.join(' / ')})`;
    };
    await settle();
    const ready = read('ready_rss', rssOf, (n) => `RSS of the ${n} ${SETTLE_MS / 1000} s after it was ready`);
    log(`memory: RSS ${SETTLE_MS / 1000} s after ready ${ready}`);
    await settle(idleMs - SETTLE_MS);
    log(
      `memory: idle RSS (${idleMs / 1000} s) ${read('idle_rss', rssOf, (n) => `idle RSS of the ${n} (${idleMs / 1000} s without work)`)}`,
    );
    // What each holds alone: its RSS less the pages of the node binary that every process shares.
    const own = read('idle_private', privateOf, (n) => `idle private memory of the ${n} (RSS less the pages it shares)`);
    log(`memory: idle private memory ${own}`);
  } finally {
    await mesh?.stop();
    await nats.stop();
  }
}

/**
 * The gateway started fresh on a ledger retaining each of `plan.memory.retained` tasks: ms from its
 * process start to listening and to its open tasks known, its RSS once settled; then its first
 * ListTasks page of the session holding those tasks (which builds that session's index) and its RSS
 * after (and, for the largest ledger, after `idleMs` more without work).
 */
async function gatewayAtRetained(plan: Plan, figures: Figures, log: Log): Promise<void> {
  const nats = await startBenchNats(MACHINE, [SHELF]);
  let nc: NatsConnection | undefined;
  let mesh: Mesh | undefined;
  try {
    nc = await connect({ servers: nats.server.url, name: 'bench memory preload', ...benchLogin(nats.adminEnv) });
    // The gateway makes the bucket; raised so the largest preload fits whatever the default is.
    mesh = stoppedOnInterrupt(
      await startMesh({
        nats: nats.server,
        machine: MACHINE,
        built: BUILT,
        env: { ...RAISED_LIMITS, LIMIT_RETAINED_TASKS: '1000000' },
        serviceEnv: nats.serviceEnv,
      }),
    );
    await mesh.gateway.stop();
    const ledger = await Ledger.open(nc, { limits: { retainedTasks: 1_000_000 } });
    let loaded = 0;
    for (const n of plan.memory.retained) {
      const tp = Date.now();
      await preloadShelf(ledger, loaded, n - loaded);
      loaded = n;
      log(`memory: ledger holds ${n} tasks (preloaded in ${((Date.now() - tp) / 1000).toFixed(1)} s); starting a gateway on it`);
      // Start-up to listening is one short span a busy moment can double: the median of three starts,
      // the last of which stays up for the rest. Each is stopped only once its open tasks are known,
      // so the next does not start beside a background read still going on nats-server (its consumer
      // goes 5 s after its reader): the likely cause of a full run's 402 / 513 / 514 ms on 100,000
      // tasks on 2026-12-05, where the run after it read 361 / 349 / 375.
      const starts: number[] = [];
      for (let i = 1; i < GATEWAY_STARTS; i++) {
        const ts = Date.now();
        const gw = await mesh.startGateway();
        starts.push(Date.now() - ts);
        await gw.waitFor(/open tasks known/, 600_000);
        await gw.stop();
      }
      const t0 = Date.now();
      const gw = await mesh.startGateway();
      starts.push(Date.now() - t0);
      const listening = median(starts)!;
      // The open tasks (for the expiry sweep) are learnt in the background, while it already answers.
      await gw.waitFor(/open tasks known/, 600_000);
      const openKnown = Date.now() - t0;
      await settle();
      const rssReady = rssOf(gw);
      // What it holds, read as the idle figures are: the start-up pass decoded every retained task,
      // and V8 gives that garbage back only after some seconds without work.
      await settle(plan.memory.idleMs - SETTLE_MS);
      const rss = rssOf(gw);
      // The first listing of the session that holds them builds that session's index (once).
      const tl = Date.now();
      const page = await rpc(`${mesh.gatewayUrl}/a2a/${SHELF}`, 'ListTasks', { pageSize: plan.reads.pageSize });
      if (!page.result) throw new Error(`ListTasks on ${n} tasks failed: ${JSON.stringify(page.error)}`);
      const firstList = Date.now() - tl;
      await settle();
      const label = n.toLocaleString('en');
      const on = `a gateway starting on ${label} retained tasks`;
      figures.single(
        `gateway_start_${n}_tasks_ms`,
        `${on}: process start to listening (median of ${GATEWAY_STARTS})`,
        'ms',
        'ours',
        listening,
      );
      figures.single(`gateway_open_known_${n}_tasks_ms`, `${on}: process start to its open tasks known`, 'ms', 'ours', openKnown);
      figures.single(
        `gateway_rss_ready_${n}_tasks_mb`,
        `RSS of a gateway on ${label} retained tasks, 5 s after its open tasks are known`,
        'MB',
        'ours',
        rssReady,
      );
      figures.single(
        `gateway_rss_${n}_tasks_mb`,
        `RSS of a gateway on ${label} retained tasks, after ${plan.memory.idleMs / 1000} s without work`,
        'MB',
        'ours',
        rss,
      );
      figures.single(`gateway_first_list_${n}_tasks_ms`, `${on}: its first ListTasks page of that session`, 'ms', 'ours', firstList);
      const rssListed = rssOf(gw);
      figures.single(
        `gateway_rss_listed_${n}_tasks_mb`,
        `RSS of that gateway once the session is listed, settled`,
        'MB',
        'ours',
        rssListed,
      );
      // Building the index leaves its garbage in a young generation V8 gives back only after a quiet
      // spell (Node 24's grows to twice Node 20's): for the largest ledger, what it keeps after that too.
      let listedIdle = '';
      if (n === plan.memory.retained.at(-1)) {
        await settle(plan.memory.idleMs - SETTLE_MS);
        const rssListedIdle = rssOf(gw);
        figures.single(
          `gateway_rss_listed_idle_${n}_tasks_mb`,
          `RSS of that gateway after ${plan.memory.idleMs / 1000} s without work since the listing`,
          'MB',
          'ours',
          rssListedIdle,
        );
        listedIdle = `, ${rssListedIdle} MB idle`;
      }
      log(
        `memory: gateway on ${n} tasks listening in ${listening} ms (${starts.join(' / ')}), open tasks known in ${openKnown} ms, RSS ${rssReady} MB, ${rss} MB idle; ` +
          `first page in ${firstList} ms, then RSS ${rssListed} MB${listedIdle}`,
      );
      await gw.stop();
    }
  } finally {
    await nc?.drain().catch(() => {});
    await mesh?.stop();
    await nats.stop();
  }
}

/**
 * `up` on a fresh state folder: ms from its start to "Press Ctrl-C" and to the first answered ask, the
 * median of UP_STARTS starts (one start read 1,011 ms at one run and 1,726 at the next on Node 20).
 */
async function upStartup(figures: Figures, log: Log): Promise<void> {
  const runs: { ready: number; answered: number | null }[] = [];
  for (let i = 0; i < UP_STARTS; i++) runs.push(await upStartOnce());
  const ready = median(runs.map((r) => r.ready));
  const answered = median(runs.map((r) => r.answered));
  figures.single(
    'up_ready_ms',
    `\`up\` on a fresh state folder: start to "Press Ctrl-C" (NATS, gateway, scheduler, demo bridge; median of ${UP_STARTS})`,
    'ms',
    'ours',
    ready,
  );
  figures.single(
    'up_first_answer_ms',
    `\`up\` on a fresh state folder: start to its first answered ask (blocking SendMessage; median of ${UP_STARTS})`,
    'ms',
    'ours',
    answered,
  );
  const each = runs.map((r) => `${r.ready}/${r.answered ?? '–'}`).join(', ');
  log(`memory: up ready in ${ready} ms, first answer at ${answered} ms (median; each start ready/answered: ${each} ms)`);
}

/** One start of `up` on a fresh state folder, stopped (SIGINT, as a person stops it) once it has answered. */
async function upStartOnce(): Promise<{ ready: number; answered: number | null }> {
  const state = await mkdtemp(join(tmpdir(), 'shrooms-bench-up-'));
  const port = await freePort();
  const t0 = Date.now();
  const up = wrap(
    spawn(process.execPath, [...nodeArgs(CLI, BUILT), 'up', '--port', String(port)], {
      cwd: REPO_ROOT,
      env: { ...process.env, SHROOMS_STATE_DIR: state, SHROOMS_MACHINE: MACHINE, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const stopUp = async () => {
    up.child.kill('SIGINT');
    await up.stop();
    await rm(state, { recursive: true, force: true });
  };
  const forget = onInterrupt(stopUp);
  try {
    await up.waitFor(/Press Ctrl-C to stop/, 300_000);
    const ready = Date.now() - t0;
    let answered: number | null = null;
    for (let i = 0; answered === null && Date.now() - t0 < 300_000; i++) {
      const res = await rpc(`http://127.0.0.1:${port}/a2a/demo`, 'SendMessage', {
        message: { messageId: `bench-up-${i}`, role: 'ROLE_USER', parts: [{ text: 'hello' }] },
      }).catch(() => undefined);
      if (res?.result?.task?.status?.state === 'TASK_STATE_COMPLETED') answered = Date.now() - t0;
      else await new Promise((r) => setTimeout(r, 50));
    }
    return { ready, answered };
  } finally {
    forget();
    await stopUp();
  }
}
