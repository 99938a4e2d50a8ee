/**
 * A nats-server restart under load (single node, file storage): first a graceful restart, then
 * kill -9 and a start on the same data. After each, the ledger holds every task it held before
 * (finished ones unchanged), every service is back (gateway ready, bridges and guard serving asks,
 * scheduler answering), and new asks succeed within a generous bound — the time is reported.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { SERVICE_NAMES, isTerminal } from '@shrooms/protocol';
import { scheduleClient } from '@shrooms/client';
import {
  CLI,
  eventually,
  reportChaos,
  rpc,
  runTs,
  sendAsk,
  startMesh,
  startNatsServer,
  type ChaosRow,
  type Mesh,
  type NatsServerHandle,
  type ServiceProcess,
} from '@shrooms/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { probeUntilCompleted, runFaultUnderLoad, type Fault } from './support/faults.js';
import { judgeAcked, openLedger, resultLostNote, type LedgerView } from './support/ledger.js';

/** Generous bound for "new asks succeed again" (asserted); the measured time is reported. */
const RECOVERY_BOUND_MS = 60_000;
/** Short expiry, as in every chaos run: a task nobody can finish is canceled at its deadline. */
const EXPIRY_MS = 20_000;
const ASKS = 90;

let nats: NatsServerHandle;
let mesh: Mesh;
let nc: NatsConnection;
let ledger: LedgerView;
let scheduler: ServiceProcess;
const rows: ChaosRow[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  mesh = await startMesh({
    nats,
    guard: true,
    sessions: [{ name: 'alpha' }, { name: 'beta' }],
    env: {
      ECHO_DELAY_MS: '30',
      GUARD_RATE_MAX: '1000',
      LIMIT_BLOCKING_WAIT_MS: '30000',
      LIMIT_TASK_EXPIRY_MS: String(EXPIRY_MS),
      GATEWAY_EXPIRY_SWEEP_MS: '1000',
    },
  });
  scheduler = runTs(CLI, ['scheduler'], { ...mesh.env, SHROOMS_GATEWAY_URL: mesh.gatewayUrl });
  mesh.services.push(scheduler);
  await scheduler.waitFor(/scheduler ready/, 60_000);
  for (const s of ['alpha', 'beta'])
    await eventually(async () => (await rpc(`${mesh.gatewayUrl}/a2a/${s}`, 'ListTasks', {})).result, 30_000, 100);
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  ledger = await openLedger(nc);
  // Something for the ledger to keep: finished tasks whose records must come back byte for byte.
  for (let i = 0; i < 20; i++)
    expect(
      (await sendAsk(mesh.gatewayUrl, i % 2 ? 'alpha' : 'beta', `seed-${i}`, `seed ${i}`, { blocking: true })).task?.status.state,
    ).toBe('TASK_STATE_COMPLETED');
}, 180_000);

afterAll(async () => {
  await nc?.close().catch(() => {});
  await mesh?.stop();
  await nats?.stop();
  if (rows.length) await reportChaos('nats-server restart', rows);
});

/** Time from `since` until each service answers again. */
async function servicesBack(since: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const client = scheduleClient(nc, { timeoutMs: 2_000 });
  await Promise.all([
    eventually(
      async () => (await fetch(`${mesh.gatewayUrl}/readyz`)).ok && (out.gatewayReady = Date.now() - since),
      RECOVERY_BOUND_MS,
      100,
    ),
    eventually(
      async () => (await nc.request(`$SRV.PING.${SERVICE_NAMES.guard}`, '', { timeout: 1_000 })) && (out.guard = Date.now() - since),
      RECOVERY_BOUND_MS,
      100,
    ),
    eventually(async () => (await client.list({})) && (out.scheduler = Date.now() - since), RECOVERY_BOUND_MS, 100),
    // Each bridge: a new ask to its session is finished (delivery, the worker, the ledger write).
    ...['alpha', 'beta'].map(
      async (s) => (out[`bridge ${s}`] = (await probeUntilCompleted(mesh.gatewayUrl, s, `back-${since}-${s}`, RECOVERY_BOUND_MS)) - since),
    ),
  ]);
  return out;
}

async function phase(name: string, fault: Fault, prefix: string): Promise<void> {
  const before = await ledger.all(mesh.machine);
  const marks = new Map([mesh.gateway, ...mesh.bridges.values()].map((p) => [p, p.output().length]));
  const run = await runFaultUnderLoad(
    { gatewayUrl: mesh.gatewayUrl, sessions: ['alpha', 'beta'], count: ASKS, concurrency: 4, prefix, blockingEvery: 3, pauseMs: 20 },
    fault,
    { probeId: `probe-${prefix}`, graceMs: 5_000 },
  ).catch((err: Error) => {
    // Say what the services logged meanwhile: a failure here is a reconnection problem to find.
    const logs = [...marks].map(([p, at]) =>
      p
        .output()
        .slice(at)
        .split('\n')
        .filter((l) => /"level":(40|50|60)/.test(l))
        .map((l) => l.slice(0, 400))
        .slice(-8)
        .join('\n'),
    );
    throw new Error(`${err.message}\n${logs.join('\n---\n')}`);
  });
  const back = await servicesBack(run.restartAt);
  const after = await ledger.all(mesh.machine);
  // The ledger is intact: every task still there; a finished task exactly as it was.
  const missing = [...before.keys()].filter((k) => !after.has(k));
  const changed = [...before]
    .filter(([k, t]) => isTerminal(t.status.state) && JSON.stringify(after.get(k)) !== JSON.stringify(t))
    .map(([k]) => k);
  const verdict = await judgeAcked(ledger, mesh.machine, run.records, {
    untilMs: Date.now() + EXPIRY_MS + 10_000,
    expiryMs: EXPIRY_MS,
    graceMs: 10_000,
    fastWorker: true,
  });
  const s = run.load.summary();
  const askedAgainMs = run.recoveredAt - run.restartAt;
  rows.push({
    scenario: name,
    load: `${s.asks} asks, 4 at a time, 1 in 3 blocking`,
    faults: `${fault.what}, ${((run.restartAt - run.faultAt) / 1000).toFixed(1)} s down; ledger held ${before.size} tasks`,
    acknowledged: verdict.acknowledged,
    lost: verdict.lost + missing.length + changed.length,
    stuck: verdict.stuck,
    recoveryMs: run.recoveredAt - run.faultAt,
    notes: [`asks served ${(Math.max(0, askedAgainMs) / 1000).toFixed(1)} s after the server was back`, resultLostNote(verdict)]
      .filter(Boolean)
      .join('; '),
    details: {
      askedAgainMs,
      servicesBackMs: back,
      clientErrors: s.clientErrors,
      errorsByKind: s.errorsByKind,
      strayErrors: run.strayErrors.length,
      endings: verdict.endings,
      missing: missing.length,
      changed: changed.length,
    },
  });
  process.stdout.write(`${name}: ${JSON.stringify(rows[rows.length - 1])}\n${verdict.problems.slice(0, 10).join('\n')}\n`);
  expect(missing, 'tasks the restart lost').toEqual([]);
  expect(changed, 'finished tasks the restart changed').toEqual([]);
  expect(s.refused).toBe(0);
  expect(verdict.acknowledged).toBe(s.asks);
  expect(verdict.lost).toBe(0);
  expect(verdict.stuck).toBe(0);
  // A worker's write that timed out while the server was away is read back and sent again
  // (Ledger.write): no task may end by expiry for want of its result.
  expect(verdict.resultLost, "tasks finished by expiry: the worker's result was never stored").toBe(0);
  expect(verdict.doubled).toBe(0);
  expect(run.strayErrors).toEqual([]);
  expect(askedAgainMs).toBeLessThan(RECOVERY_BOUND_MS);
  for (const [svc, ms] of Object.entries(back)) expect(ms, `${svc} back`).toBeLessThan(RECOVERY_BOUND_MS);
}

it('keeps the ledger and serves again after a graceful nats-server restart under load', async () => {
  await phase(
    'nats-server restart (graceful)',
    {
      what: 'SIGTERM nats-server, start again on the same data',
      kill: () => nats.restart(),
      restart: async () => {},
      downMs: 0,
      probeSession: 'alpha',
    },
    'rs',
  );
});

it('keeps the ledger and serves again after kill -9 of the nats-server and a start on the same data', async () => {
  await phase(
    'nats-server kill -9 + start',
    {
      what: 'kill -9 nats-server, start again on the same data',
      kill: async () => nats.kill(),
      restart: () => nats.restart(),
      downMs: 2_000,
      probeSession: 'beta',
    },
    'rk',
  );
});
