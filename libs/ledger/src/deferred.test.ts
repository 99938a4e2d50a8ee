import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { eventually, startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { intake } from './intake.js';
import { Ledger } from './ledger.js';
import * as transitions from './transitions.js';

/**
 * A change held back (Ledger.deferTransition) on a real nats-server: what this process and another
 * one (its own connection and ledger, as the gateway is to a bridge) see of it, and when it is written.
 */
let nats: NatsWithConnection;
let otherNc: NatsConnection;
let ledger: Ledger;
let other: Ledger;
beforeAll(async () => {
  nats = await startNatsWithConnection();
  otherNc = await connect({ servers: nats.url });
  ledger = await Ledger.open(nats.nc);
  other = await Ledger.open(otherNc);
});
afterAll(async () => {
  await otherNc?.close();
  await nats?.stop();
});

const queued = async (id: string) => {
  const req = { machine: 'box', session: 's', message: { messageId: id, role: 'ROLE_USER' as const, parts: [{ text: id }] } };
  return (await intake(ledger, { ...req, origin: { device: 'laptop' }, metadata: {} }, { queued: true })).stored;
};
const start = (e: Parameters<typeof transitions.start>[0]) => transitions.start(e, new Date());
/** The states the status events report, in order. */
const states = (events: object[]) =>
  events.flatMap((e) => ('statusUpdate' in e ? [(e.statusUpdate as { status: { state: string } }).status.state] : []));
const WAIT_LONG = 60_000;

it("is written with the key's next change, in one write carrying the events of both", async () => {
  const s = await queued('with-next');
  const errors: unknown[] = [];
  const seen = await ledger.deferTransition(s.key, start, WAIT_LONG, (err) => errors.push(err));
  expect(seen?.task.status.state).toBe('TASK_STATE_WORKING');
  // Not written yet: another process still reads the task as it was.
  expect((await other.get(s.key))?.entry.task.status.state).toBe('TASK_STATE_SUBMITTED');
  const done = await ledger.transition(s.key, (e) => transitions.complete(e, 'quick', new Date()));
  expect([done.revision, done.entry.task.status.state, states(done.entry.events)]).toEqual([
    s.revision + 1,
    'TASK_STATE_COMPLETED',
    ['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'],
  ]);
  expect((await other.get(s.key))?.entry.task.status.state).toBe('TASK_STATE_COMPLETED');
  expect(errors).toEqual([]);
});

it('is written on its own when its wait ends', async () => {
  const s = await queued('on-its-own');
  await ledger.deferTransition(s.key, start, 50, () => {});
  const stored = await eventually(async () => {
    const now = await other.get(s.key);
    return now?.entry.task.status.state === 'TASK_STATE_WORKING' ? now : undefined;
  });
  expect([stored.revision, states(stored.entry.events)]).toEqual([s.revision + 1, ['TASK_STATE_WORKING']]);
});

it('is written first when this process reads the key, or writes what it holds', async () => {
  const read = await queued('read-own-writes');
  await ledger.deferTransition(read.key, start, WAIT_LONG, () => {});
  expect((await ledger.get(read.key))?.entry.task.status.state).toBe('TASK_STATE_WORKING');
  const flushed = await queued('flushed');
  await ledger.deferTransition(flushed.key, start, WAIT_LONG, () => {});
  await ledger.writeDeferred();
  expect((await other.get(flushed.key))?.entry.task.status.state).toBe('TASK_STATE_WORKING');
});

it('is refused, and said, when the task was finished by someone else meanwhile; the next change still applies', async () => {
  const s = await queued('canceled-meanwhile');
  const errors: unknown[] = [];
  await ledger.deferTransition(s.key, start, WAIT_LONG, (err) => errors.push(err));
  // The asker cancels it through another process.
  await other.transition(s.key, (e) => transitions.cancel(e, 'its asker', new Date()));
  const acked = await ledger.transition(s.key, (e) => transitions.annotate(e, { 'test/seen': true }));
  expect(acked.entry.task.status.state).toBe('TASK_STATE_CANCELED');
  expect(errors).toMatchObject([{ key: 'UNSUPPORTED_OPERATION' }]);
});
