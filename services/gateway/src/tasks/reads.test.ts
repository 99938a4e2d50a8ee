/**
 * With 10,000 tasks in the ledger, GetTask reads one task and a ListTasks page reads only the tasks
 * it returns: cost follows the answer, not the ledger's size (counted reads, not time).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/nats-core';
import { Ledger, SignalField, transitions } from '@shrooms/ledger';
import { createLogger, loadConfig } from '@shrooms/runtime';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { buildApp, type Gateway } from '../app.js';
import { GatewayConfigSchema } from '../config.js';

const N = 10_000;
let nats: NatsWithConnection;
let nc: NatsConnection;
let ledger: Ledger;
let gw: Gateway;

beforeAll(async () => {
  nats = await startNatsWithConnection();
  nc = nats.nc;
  ledger = await Ledger.open(nc);
  const signals = await SignalField.open(nc);
  const now = Date.now();
  for (let i = 0; i < N; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, N - i) }, (_, j) => {
        const n = i + j;
        const entry = transitions.newTask({
          id: `big:m-${n}`,
          contextId: `ctx-${n % 10}`,
          message: { messageId: `m-${n}`, role: 'ROLE_USER', parts: [{ text: `task ${n}` }] },
          metadata: { 'shrooms/device': 'box' },
          queued: false,
          now: new Date(now + n),
        });
        return ledger.create(ledger.key('box', 'big', `m-${n}`), entry);
      }),
    );
  }
  const config = loadConfig(GatewayConfigSchema, { SHROOMS_MACHINE: 'box', GATEWAY_GUARD: 'off', LOG_LEVEL: 'silent' });
  gw = await buildApp({ nc, log: createLogger('test', 'silent'), config, ledger, signals });
  await gw.live.openKnown();
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await nats?.stop();
});

const call = async (method: string, params: unknown) =>
  (await gw.app.inject({ method: 'POST', url: '/a2a/big', payload: { jsonrpc: '2.0', id: 1, method, params } })).json();

it('reads one task for GetTask with 10,000 in the ledger', async () => {
  const before = ledger.reads;
  const r = await call('GetTask', { id: 'big:m-4242' });
  expect(r.result.id).toBe('big:m-4242');
  expect(ledger.reads - before).toBe(1);
});

it('reads only the tasks of the page for ListTasks, newest first', async () => {
  const before = ledger.reads;
  const r = await call('ListTasks', { pageSize: 25 });
  expect(r.result.tasks).toHaveLength(25);
  expect(r.result.tasks[0].id).toBe(`big:m-${N - 1}`);
  expect(r.result.totalSize).toBe(N);
  expect(ledger.reads - before).toBe(25);
  const before2 = ledger.reads;
  const p2 = await call('ListTasks', { pageSize: 25, pageToken: r.result.nextPageToken });
  expect(p2.result.tasks[0].id).toBe(`big:m-${N - 26}`);
  expect(ledger.reads - before2).toBe(25);
});

it('filters by context without reading the tasks it skips', async () => {
  const before = ledger.reads;
  const r = await call('ListTasks', { pageSize: 10, contextId: 'ctx-3' });
  expect(r.result.tasks.every((t: { contextId: string }) => t.contextId === 'ctx-3')).toBe(true);
  expect(r.result.totalSize).toBe(N / 10);
  expect(ledger.reads - before).toBe(10);
});

it('takes a new task with no ledger read before it is stored, and knows a resend by one read', async () => {
  const send = () =>
    call('SendMessage', {
      message: { messageId: 'fresh-1', role: 'ROLE_USER', parts: [{ text: 'new' }] },
      configuration: { returnImmediately: true },
    });
  // No bridge runs for this session: the gateway stores the task in the ledger itself.
  const before = ledger.reads;
  const first = await send();
  expect(first.result.task.id).toBe('big:fresh-1');
  expect(ledger.reads - before).toBe(0);
  const before2 = ledger.reads;
  const again = await send();
  expect(again.result.task.id).toBe('big:fresh-1');
  expect(ledger.reads - before2).toBe(1);
});

it('starts without reading the history: a session is indexed when first listed, open tasks in the background', async () => {
  const config = loadConfig(GatewayConfigSchema, { SHROOMS_MACHINE: 'box', GATEWAY_GUARD: 'off', LOG_LEVEL: 'silent' });
  const signals = await SignalField.open(nc);
  const fresh = await buildApp({ nc, log: createLogger('test', 'silent'), config, ledger, signals });
  try {
    await fresh.live.openKnown();
    // Every task of the ledger came by once; the open ones (all: no bridge ran) are kept, no listing.
    expect(fresh.live.openAskedBefore(Number.MAX_SAFE_INTEGER)).toHaveLength(N + 1);
    expect(fresh.live.index.count()).toBe(0);
    const r = (
      await fresh.app.inject({
        method: 'POST',
        url: '/a2a/big',
        payload: { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageSize: 5 } },
      })
    ).json();
    expect(r.result.totalSize).toBe(N + 1);
    expect(fresh.live.index.count('big')).toBe(N + 1);
  } finally {
    await fresh.close();
  }
});
