/**
 * kill -9 under a steady load of asks (spec §13): the gateway, a bridge, one of two guard replicas,
 * the scheduler, and the nats-server node leading the ledger's stream in a 3-node cluster (R3
 * ledger) — each in turn, then restarted. For every phase:
 *
 *   - every acknowledged task (a SendMessage that returned a task) is in the ledger, finished in a
 *     correct state (completed with its echo; or canceled by expiry; or failed after its one
 *     redelivery), with its message once in its history — retries with the same message id gave
 *     the same task, never a second one;
 *   - no task stays open past its deadline (short expiry: LIMIT_TASK_EXPIRY_MS, swept every second);
 *   - clients saw errors only for requests in flight during the fault (between the kill and the
 *     probe's recovery), and each was retried safely with the same message id.
 *
 * Figures go to the chaos table (test-output/chaos/summary.json). Assertions are on counts; times
 * are reported, never asserted (bounds only keep a broken run from hanging).
 *
 * Over 300 lines: one 3-node cluster and one mesh under one steady load for the whole file; the
 * phases kill each part in turn on it and share the load, the probe and the ledger checks.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { META, isTerminal, occurrenceMessageId } from '@shrooms/protocol';
import { scheduleClient, type ScheduleClient } from '@shrooms/client';
import { compileRule, occurrences } from '@shrooms/scheduler';
import {
  CHAOS_OUTPUT_DIR,
  CLI,
  eventually,
  reportChaos,
  rpc,
  runTs,
  sendsInFlight,
  startMesh,
  startNatsCluster,
  type AskLoadOptions,
  type ChaosRow,
  type Mesh,
  type NatsCluster,
  type ServiceProcess,
} from '@shrooms/testing';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { judgeAcked, openLedger, openPastDeadline, resultLostNote, type LedgerView } from './support/ledger.js';
import { runFaultUnderLoad, type Fault, type FaultRun } from './support/faults.js';

const EXPIRY_MS = 20_000;
const SWEEP_MS = 1_000;
/** Past its deadline means: asked + expiry + this (one sweep and a margin for a busy machine). */
const DEADLINE_GRACE_MS = 10_000;
const ASKS = 120;
const CONCURRENCY = 4;
const LEDGER_STREAM = 'KV_shrooms_tasks';

let cluster: NatsCluster;
let mesh: Mesh;
let nc: NatsConnection;
let ledger: LedgerView;
let schedules: ScheduleClient;
const guards: ServiceProcess[] = [];
let scheduler: ServiceProcess;
const rows: ChaosRow[] = [];
const slowIds = ['slow-1', 'slow-2', 'slow-3'];

function startGuard(): ServiceProcess {
  const g = runTs(CLI, ['guard'], { ...mesh.env, GUARD_RATE_MAX: '1000', GUARD_BUDGET_MAX: '0' });
  mesh.services.push(g);
  return g;
}

function startScheduler(): ServiceProcess {
  const s = runTs(CLI, ['scheduler'], {
    ...mesh.env,
    SHROOMS_GATEWAY_URL: mesh.gatewayUrl,
    SCHEDULER_TICK_MS: '250',
    SCHEDULER_LEASE_MS: '3000',
    SCHEDULER_RESCAN_MS: '2000',
    SCHEDULER_MIN_INTERVAL_MS: '1000',
  });
  mesh.services.push(s);
  return s;
}

beforeAll(async () => {
  cluster = await startNatsCluster();
  mesh = await startMesh({
    nats: cluster.handle,
    sessions: [{ name: 'alpha' }, { name: 'beta' }, { name: 'slow', env: { ECHO_DELAY_MS: '3600000' } }],
    env: {
      SHROOMS_REPLICAS: '3',
      GATEWAY_GUARD: 'service',
      ECHO_DELAY_MS: '30',
      LIMIT_TASK_EXPIRY_MS: String(EXPIRY_MS),
      GATEWAY_EXPIRY_SWEEP_MS: String(SWEEP_MS),
      LIMIT_BLOCKING_WAIT_MS: '30000',
    },
  });
  guards.push(startGuard(), startGuard());
  scheduler = startScheduler();
  await Promise.all([...guards.map((g) => g.waitFor(/guard ready/, 60_000)), scheduler.waitFor(/scheduler ready/, 60_000)]);
  nc = await connect({ servers: cluster.nodes.map((n) => n.url), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  ledger = await openLedger(nc);
  schedules = scheduleClient(nc, { timeoutMs: 5_000 });
  // "bridge ready" is logged before the bridge's first signal is stored: wait until the gateway knows each session.
  for (const s of ['alpha', 'beta', 'slow'])
    await eventually(async () => (await rpc(`${mesh.gatewayUrl}/a2a/${s}`, 'ListTasks', {})).result, 30_000, 100);
  // Tasks no worker will finish in time: the expiry sweep must cancel them at their deadline.
  const url = `${mesh.gatewayUrl}/a2a/slow`;
  for (const id of slowIds) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'SendMessage',
        params: { message: { messageId: id, role: 'ROLE_USER', parts: [{ text: id }] }, configuration: { returnImmediately: true } },
      }),
    });
    const body = (await res.json()) as { result?: unknown };
    expect(body.result, JSON.stringify(body)).toBeDefined();
  }
}, 180_000);

// A phase that failed before its verdict (its probe never completed, say) keeps its logs too.
afterEach(async ({ task }) => {
  if (task.result?.state === 'fail' && mesh) await keepLogs(task.name, []).catch(() => {});
});

afterAll(async () => {
  await nc?.close().catch(() => {});
  await mesh?.stop();
  await cluster?.stop();
  if (rows.length) await reportChaos('kill -9 under load', rows);
});

const loadOf = (prefix: string): AskLoadOptions => ({
  gatewayUrl: mesh.gatewayUrl,
  sessions: ['alpha', 'beta'],
  count: ASKS,
  concurrency: CONCURRENCY,
  prefix,
  blockingEvery: 3,
  pauseMs: 20,
});

/** Judges one phase, records its row, and asserts the counts. */
async function conclude(
  scenario: string,
  faults: string,
  run: FaultRun,
  extra: Record<string, unknown> = {},
  extraAcked = 0,
): Promise<void> {
  const verdict = await judgeAcked(ledger, mesh.machine, run.records, {
    untilMs: Date.now() + EXPIRY_MS + DEADLINE_GRACE_MS,
    expiryMs: EXPIRY_MS,
    graceMs: DEADLINE_GRACE_MS,
    // A fast echo worker finishes every load task at once: one that ended by expiry had its result lost.
    fastWorker: true,
  });
  // A resend of acknowledged asks (same message id) returns the same task and adds none.
  const sample = run.records.filter((r) => r.taskId).slice(0, 10);
  let resendMismatches = 0;
  for (const r of sample) {
    const res = await fetch(`${mesh.gatewayUrl}/a2a/${r.session}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: { messageId: r.messageId, role: 'ROLE_USER', parts: [{ text: r.text }] },
          configuration: { returnImmediately: true },
        },
      }),
    });
    const t = ((await res.json()) as { result?: { task: { id: string; contextId: string } } }).result?.task;
    if (!t || t.id !== r.taskId || t.contextId !== r.contextId) resendMismatches++;
  }
  const s = run.load.summary();
  const row: ChaosRow = {
    scenario,
    load: `${s.asks} asks, ${CONCURRENCY} at a time, 1 in 3 blocking, R3 ledger`,
    faults,
    acknowledged: verdict.acknowledged + extraAcked,
    lost: verdict.lost,
    stuck: verdict.stuck,
    recoveryMs: run.recoveredAt - run.faultAt,
    ...(resultLostNote(verdict) ? { notes: resultLostNote(verdict) } : {}),
    details: {
      downMs: run.restartAt - run.faultAt,
      clientErrors: s.clientErrors,
      errorsByKind: s.errorsByKind,
      retriedAsks: s.retried,
      strayErrors: run.strayErrors.length,
      refused: s.refused,
      endings: verdict.endings,
      doubled: verdict.doubled,
      resendMismatches,
      ...extra,
    },
  };
  rows.push(row);
  process.stdout.write(`${scenario}: ${JSON.stringify(row)}\n${verdict.problems.slice(0, 10).join('\n')}\n`);
  if (verdict.problems.length) await keepLogs(scenario, verdict.problems);
  expect(s.refused, 'asks refused for good').toBe(0);
  expect(s.mismatches, 'answers naming another task').toBe(0);
  expect(verdict.acknowledged).toBe(s.asks);
  expect(verdict.lost, 'acknowledged tasks lost or in a wrong state').toBe(0);
  expect(verdict.stuck, 'tasks open past their deadline').toBe(0);
  // The ledger reads back a write that timed out and sends it again when it was not stored
  // (Ledger.write), so a worker's result outlives the fault: none of these tasks may need expiry.
  expect(verdict.resultLost, "tasks finished by expiry: the worker's result was never stored").toBe(0);
  expect(verdict.doubled, 'messages doubled by retries').toBe(0);
  expect(resendMismatches, 'resends that did not return the same task').toBe(0);
  expect(run.strayErrors, 'errors outside the fault window').toEqual([]);
}

/**
 * A phase with problems keeps what explains them: every service's log and the problem tasks as
 * the ledger holds them, under test-output/chaos/kill-SCENARIO/ (the runner's output keeps only
 * the verdict).
 */
async function keepLogs(scenario: string, problems: string[]): Promise<void> {
  const dir = join(CHAOS_OUTPUT_DIR, `kill-${scenario.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  await mkdir(dir, { recursive: true });
  const logs: [string, ServiceProcess][] = [
    ['gateway', mesh.gateway],
    ...[...mesh.bridges].map(([name, p]): [string, ServiceProcess] => [`bridge-${name}`, p]),
    ...guards.map((g, i): [string, ServiceProcess] => [`guard-${i + 1}`, g]),
    ['scheduler', scheduler],
  ];
  await Promise.all([
    ...logs.map(([name, p]) => writeFile(join(dir, `${name}.log`), p.output())),
    ...cluster.nodes.map((n) => writeFile(join(dir, `nats-${n.name}.log`), n.stderr())),
  ]);
  const tasks = await ledger.all(mesh.machine);
  // Without a verdict's problems, every task still open.
  const named = [...tasks.values()].filter((t) =>
    problems.length ? problems.some((p) => p.startsWith(`${t.id}:`)) : !isTerminal(t.status.state),
  );
  await writeFile(join(dir, 'tasks.json'), JSON.stringify({ problems, tasks: named }, null, 2));
  // CI keeps only the runner's output: the gist goes there too — the tasks and each service's last
  // warnings and errors (pino levels 40 and up).
  const warned = logs.flatMap(([name, p]) =>
    p
      .output()
      .split('\n')
      .filter((l) => /"level":[4-6]0/.test(l))
      .slice(-12)
      .map((l) => `  ${name}: ${l.slice(0, 400)}`),
  );
  const states = named.slice(0, 20).map((t) => `  ${t.id} ${t.status.state} since ${t.status.timestamp}`);
  process.stdout.write(
    `logs and tasks of the problems kept in ${dir}\ntasks:\n${states.join('\n') || '  (none)'}\n` +
      `last warnings and errors:\n${warned.join('\n') || '  (none)'}\n`,
  );
}

describe('kill -9 under a steady load of asks', () => {
  it('loses no acknowledged task when the gateway is killed and restarted', async () => {
    const fault: Fault = {
      what: 'gateway',
      kill: () => mesh.gateway.kill(),
      restart: async () => void (await mesh.startGateway()),
      downMs: 1_000,
      probeSession: 'alpha',
    };
    const run = await runFaultUnderLoad(loadOf('gw'), fault, { probeId: 'probe-gw' });
    await conclude('kill -9 gateway', `kill -9 gateway, down ${((run.restartAt - run.faultAt) / 1000).toFixed(1)} s, restart`, run);
  });

  it('loses no acknowledged task when a bridge is killed and restarted', async () => {
    const fault: Fault = {
      what: 'bridge',
      kill: () => mesh.bridges.get('alpha')!.kill(),
      restart: async () => void (await mesh.startBridge('alpha')),
      downMs: 1_000,
      probeSession: 'alpha',
    };
    const run = await runFaultUnderLoad(loadOf('br'), fault, { probeId: 'probe-br' });
    await conclude('kill -9 bridge', `kill -9 bridge alpha, down ${((run.restartAt - run.faultAt) / 1000).toFixed(1)} s, restart`, run);
  });

  it('loses no acknowledged task when one of two guard replicas is killed and restarted', async () => {
    const fault: Fault = {
      what: 'guard',
      kill: () => guards[0]!.kill(),
      restart: async () => {
        guards[0] = startGuard();
        await guards[0].waitFor(/guard ready/, 60_000);
      },
      downMs: 1_000,
      probeSession: 'beta',
    };
    const run = await runFaultUnderLoad(loadOf('gd'), fault, { probeId: 'probe-gd' });
    await conclude(
      'kill -9 guard replica',
      `kill -9 guard 1 of 2, down ${((run.restartAt - run.faultAt) / 1000).toFixed(1)} s, restart`,
      run,
    );
  });

  it('fires every occurrence exactly once when the scheduler is killed and restarted', async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_000).toISOString();
    const m = mesh.machine;
    const created = (
      await schedules.create({
        recipients: [`${m}/alpha`, `${m}/beta`],
        prompt: 'chaos tick',
        at,
        repeat: 'every 1s;count=10',
        origin: { device: m },
      })
    ).schedule;
    const occurrenceTasks = async () => [...(await ledger.all(m)).values()].filter((t) => t.metadata?.[META.schedule] === created.id);
    let restartAt = 0;
    const fault: Fault = {
      what: 'scheduler',
      before: async () => void (await eventually(async () => (await occurrenceTasks()).length >= 4, 60_000, 200)),
      kill: () => scheduler.kill(),
      restart: async () => {
        restartAt = Date.now();
        scheduler = startScheduler();
        await scheduler.waitFor(/scheduler ready/, 60_000);
      },
      downMs: 2_000,
      probeSession: 'alpha',
    };
    const run = await runFaultUnderLoad(loadOf('sc'), fault, { probeId: 'probe-sc' });
    // Recovery: the first occurrence the restarted scheduler delivered.
    const firstAfter = await eventually(
      async () => {
        const later = (await occurrenceTasks()).map((t) => Date.parse(String(t.metadata?.[META.createdAt]))).filter((x) => x >= restartAt);
        return later.length ? Math.min(...later) : undefined;
      },
      60_000,
      200,
    );
    await eventually(async () => (await schedules.list({ id: created.id, state: 'all' })).schedules[0]?.state === 'done', 60_000, 250);
    // A straggling double would land while a send is still in flight: wait until the live replica's
    // log shows none (the killed one's last send, if the gateway took it, is the same task its
    // resend after the restart found).
    await eventually(() => sendsInFlight(scheduler.output()).length === 0, 30_000, 100);
    const tasks = await occurrenceTasks();
    const want = occurrences(compileRule(created.rule), 100).flatMap((o) =>
      created.recipients.map((r) => `${r.split('/')[1]}:${occurrenceMessageId(created.id, o.at)}`),
    );
    await eventually(async () => (await occurrenceTasks()).every((t) => t.status.state === 'TASK_STATE_COMPLETED'), 60_000, 250);
    run.recoveredAt = firstAfter;
    await conclude(
      'kill -9 scheduler',
      `kill -9 scheduler (1 replica), down ${((run.restartAt - run.faultAt) / 1000).toFixed(1)} s, restart`,
      run,
      { occurrences: `${tasks.length}/${want.length}` },
      tasks.length,
    );
    expect(tasks.map((t) => t.id).sort()).toEqual(want.sort());
  });

  it('loses no acknowledged task when the node leading the ledger is killed (3-node cluster)', async () => {
    let victim = '';
    const fault: Fault = {
      what: 'nats node',
      kill: async () => {
        victim = (await cluster.streamLeader(LEDGER_STREAM)) ?? 'n1';
        await cluster.node(victim).kill();
      },
      restart: () => cluster.node(victim).restart(),
      downMs: 5_000,
      probeSession: 'beta',
    };
    const run = await runFaultUnderLoad(loadOf('nn'), fault, { probeId: 'probe-nn', graceMs: 5_000 });
    const leaderAfter = await cluster.streamLeader(LEDGER_STREAM);
    await conclude(
      'kill -9 nats node (ledger leader)',
      `kill -9 nats ${victim} (stream leader of 3), down ${((run.restartAt - run.faultAt) / 1000).toFixed(1)} s, restart`,
      run,
      { victim, leaderAfter, servedWhileDown: run.recoveredAt < run.restartAt },
    );
  });

  it('leaves no task open past its deadline', async () => {
    // The slow session's tasks were asked first; the sweep must have canceled them by now. When it
    // has not, the failure says where each task stands and what the gateway said about expiry.
    let seen: string[] = [];
    await eventually(
      async () => {
        const all = await Promise.all(slowIds.map((id) => ledger.get(mesh.machine, 'slow', id)));
        seen = all.map((t, i) =>
          t
            ? `${t.id} ${t.status.state} at ${t.status.timestamp} (asked ${String(t.metadata?.[META.createdAt])})`
            : `slow:${slowIds[i]} missing`,
        );
        return all.every((t) => t?.status.state === 'TASK_STATE_CANCELED' && t.metadata?.[META.expired]);
      },
      EXPIRY_MS + DEADLINE_GRACE_MS,
      250,
    ).catch((err: Error) => {
      const said = mesh.gateway
        .output()
        .split('\n')
        .filter((l) => /expir|nats status/.test(l))
        .slice(-10);
      throw new Error(`${err.message}\nslow tasks: ${seen.join('; ')}\ngateway: ${said.join('\n') || '(nothing about expiry)'}`);
    });
    expect(await openPastDeadline(ledger, mesh.machine, EXPIRY_MS, DEADLINE_GRACE_MS)).toEqual([]);
  });
});
