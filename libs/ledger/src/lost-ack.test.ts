import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { startNatsProxy, startNatsWithConnection, type NatsProxy, type NatsWithConnection } from '@shrooms/testing';
import type { LedgerEntry } from './entry.js';
import { Ledger } from './ledger.js';
import * as transitions from './transitions.js';
import { asked } from './testing/asked.js';

/**
 * A write whose acknowledgement is lost on its way back — a real nats-server stores it, and a TCP
 * proxy between it and this ledger's connection drops that one message (the testing library's
 * `startNatsProxy`) — while another writer changes the task on top of it before it reads back.
 */
let nats: NatsWithConnection;
let proxy: NatsProxy;
let viaProxy: NatsConnection;
beforeAll(async () => {
  nats = await startNatsWithConnection();
  proxy = await startNatsProxy(nats.url);
  viaProxy = await connect({ servers: proxy.url });
});
afterAll(async () => {
  await viaProxy?.close();
  await proxy?.close();
  await nats?.stop();
});

const count = (e: LedgerEntry) => Number(e.task.metadata?.['test/count'] ?? 0);
/** A change that is not idempotent: applied twice, it counts 2. */
const bump = (e: LedgerEntry) => transitions.annotate(e, { 'test/count': count(e) + 1 });
/** A JetStream acknowledgement of a write to the ledger's stream. */
const isAck = (payload: string) => /^\{"stream":"KV_shrooms_tasks",.*"seq":\d+/.test(payload);

it('applies a change once when its acknowledgement is lost and another writer changed the task on top of it', async () => {
  const mine = await Ledger.open(viaProxy);
  const theirs = await Ledger.open(nats.nc);
  const key = mine.key('box', 's', 'lost-ack');
  await mine.create(key, asked('lost-ack'));
  await mine.transition(key, (e) => transitions.start(e, new Date()));

  const dropped = proxy.dropNext(isAck);
  const write = mine.transition(key, bump);
  await dropped;
  // Stored, unacknowledged: the other writer reads it and writes on top before the read-back.
  const over = await theirs.transition(key, (e) => transitions.annotate(e, { 'test/other': true }));
  expect(count(over.entry)).toBe(1);

  const stored = await write;
  // The writer is told the task as it stands: its own change once, the other's on top.
  expect([stored.revision, count(stored.entry), stored.entry.task.metadata?.['test/other']]).toEqual([over.revision, 1, true]);
  const now = (await theirs.get(key))!;
  expect([now.revision, count(now.entry)]).toEqual([over.revision, 1]);
  // And its next change builds on that, not on what it wrote.
  const next = await mine.transition(key, bump);
  expect([count(next.entry), next.entry.task.metadata?.['test/other']]).toEqual([2, true]);
}, 30_000);
