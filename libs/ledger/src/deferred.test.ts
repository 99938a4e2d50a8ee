import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { eventually, startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { intake } from './intake.js';
import { Ledger } from './ledger.js';
import * as transitions from './transitions.js';
import { asked } from './testing/asked.js';

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
  // Two versions in one write: its events start after the one stored before it.
  expect([done.entry.v, done.entry.from]).toEqual([s.entry.v + 2, s.entry.v]);
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

it('is built from the task as someone else changed it, once this process has seen that change, not from its own last write', async () => {
  /** A task this process started and blocked (its own last write), then answered through another process (the gateway's fallback). */
  const answeredElsewhere = async (id: string) => {
    const s = await queued(id);
    await ledger.transition(s.key, start);
    await ledger.transition(s.key, (e) => transitions.block(e, 'which branch?', new Date()));
    const message = { messageId: `${id}-answer`, role: 'ROLE_USER' as const, parts: [{ text: 'main' }] };
    return (await other.transition(s.key, (e) => transitions.answer(e, message, new Date()))).revision;
  };
  const lastText = (e: Awaited<ReturnType<Ledger['deferTransition']>>) => {
    const part = e?.task.history?.at(-1)?.parts[0];
    return part && 'text' in part ? part.text : undefined;
  };
  // Seen by a watch of its own (the bridge's, which skips its own writes).
  const watched = ledger.key('box', 's', 'answer-watched');
  const seen: number[] = [];
  const stop = await ledger.watch(watched, (s) => seen.push(s.revision), undefined, undefined, { only: 'updates', ownWrites: 'skip' });
  try {
    const answered = await answeredElsewhere('answer-watched');
    await eventually(() => seen.includes(answered));
    expect(lastText(await ledger.deferTransition(watched, start, WAIT_LONG, () => {}))).toBe('main');
  } finally {
    stop();
  }
  // Seen by a read.
  const read = ledger.key('box', 's', 'answer-read');
  await answeredElsewhere('answer-read');
  await ledger.get(read);
  expect(lastText(await ledger.deferTransition(read, start, WAIT_LONG, () => {}))).toBe('main');
  await ledger.writeDeferred();
});

/** A new task's entry as the bridge's intake makes it, held back (Ledger.deferCreate). */
const fresh = (id: string) => ({ key: ledger.key('box', 's', id), entry: asked(id) });
const kinds = (events: object[]) => events.map((e) => ('task' in e ? 'task' : Object.keys(e)[0]));

it('holds a create: nobody sees the task until its next change, written with it in one write', async () => {
  const { key, entry } = fresh('create-held');
  const errors: unknown[] = [];
  const held = await ledger.deferCreate(key, entry, WAIT_LONG, (err) => errors.push(err));
  expect(held?.revision).toBe(0);
  expect(await other.get(key)).toBeNull();
  // A start held on top of it, then the result: one write with the events of all three.
  await ledger.deferTransition(key, start, WAIT_LONG, (err) => errors.push(err));
  expect(await other.get(key)).toBeNull();
  const done = await ledger.transition(key, (e) => transitions.complete(e, 'quick', new Date()));
  expect([done.entry.task.status.state, kinds(done.entry.events)]).toEqual([
    'TASK_STATE_COMPLETED',
    ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate'],
  ]);
  expect((await other.get(key))?.revision).toBe(done.revision);
  expect(errors).toEqual([]);
});

it('writes a held create on its own when its wait ends, and first when this process reads or creates the key', async () => {
  const alone = fresh('create-alone');
  await ledger.deferCreate(alone.key, alone.entry, 50, () => {});
  const stored = await eventually(() => other.get(alone.key));
  expect(kinds(stored.entry.events)).toEqual(['task']);

  const read = fresh('create-read');
  await ledger.deferCreate(read.key, read.entry, WAIT_LONG, () => {});
  expect((await ledger.get(read.key))?.entry.task.id).toBe('s:create-read');
  expect(await other.get(read.key)).not.toBeNull();

  // A resend racing the first delivery: the held create is written, and the second create finds it.
  const resent = fresh('create-resent');
  await ledger.deferCreate(resent.key, resent.entry, WAIT_LONG, () => {});
  expect(await ledger.create(resent.key, { ...resent.entry, task: { ...resent.entry.task, contextId: 'resent' } })).toBeNull();
  expect(await other.get(resent.key)).not.toBeNull();
});

it('tells its holder when the key was stored by someone else meanwhile, and applies the next change to theirs', async () => {
  const { key, entry } = fresh('create-raced');
  const errors: unknown[] = [];
  await ledger.deferCreate(key, entry, WAIT_LONG, (err) => errors.push(err));
  // The gateway queued the same task itself (its bridge was slow to take it).
  const theirs = (await other.create(key, entry))!;
  const done = await ledger.transition(key, (e) => transitions.complete(e, 'done', new Date()));
  expect([done.revision > theirs.revision, done.entry.task.status.state, kinds(done.entry.events)]).toEqual([
    true,
    'TASK_STATE_COMPLETED',
    ['artifactUpdate', 'statusUpdate'],
  ]);
  expect(errors).toMatchObject([{ key: 'INTERNAL' }]);
});

it('keeps a held create whose write failed, and writes it once the ledger answers again', async () => {
  // This process's NATS link says the connection is lost: every write is refused at once.
  const link: { outageMs: number | undefined } = { outageMs: undefined };
  const away = await Ledger.open(nats.nc, { link });
  const { key, entry } = fresh('create-kept');
  const errors: unknown[] = [];
  await away.deferCreate(key, entry, 20, (err) => errors.push(err));
  link.outageMs = 5_000;
  await eventually(() => errors.length >= 2);
  expect(errors[0]).toMatchObject({ key: 'NATS_UNAVAILABLE' });
  await expect(away.transition(key, (e) => transitions.complete(e, 'kept', new Date()))).rejects.toMatchObject({ key: 'NATS_UNAVAILABLE' });
  expect(await other.get(key)).toBeNull();
  link.outageMs = undefined;
  // Held again after each failure, longer each time (at most 5 s): written once the link is back.
  const stored = await eventually(() => other.get(key));
  expect([stored.entry.task.status.state, kinds(stored.entry.events)]).toEqual(['TASK_STATE_SUBMITTED', ['task']]);
});

it('refuses a held create into a full ledger to its holder once, and does not write it when room comes back', async () => {
  // A server of its own: the bucket's limit is set when it is made.
  const server = await startNatsWithConnection();
  try {
    const full = await Ledger.open(server.nc, { limits: { retainedTasks: 1 } });
    expect(await full.create(full.key('box', 's', 'filler'), asked('filler'))).not.toBeNull();
    const alone = { key: full.key('box', 's', 'full-alone'), entry: asked('full-alone') };
    const withNext = { key: full.key('box', 's', 'full-next'), entry: asked('full-next') };
    const errors: unknown[] = [];
    const nextErrors: unknown[] = [];
    // Written on its own when its wait ends.
    await full.deferCreate(alone.key, alone.entry, 20, (err) => errors.push(err));
    await eventually(() => errors.length > 0);
    // Written with its next change (the worker's result): the change is refused with it.
    await full.deferCreate(withNext.key, withNext.entry, WAIT_LONG, (err) => nextErrors.push(err));
    await expect(full.transition(withNext.key, (e) => transitions.complete(e, 'done', new Date()))).rejects.toMatchObject({
      key: 'LIMIT_EXCEEDED',
      details: { limit: 'retainedTasks' },
    });
    // Room comes back (the owner raises the limit): nothing is held any more, nothing is written.
    await Ledger.open(server.nc, { limits: { retainedTasks: 10 }, owner: true });
    await full.writeDeferred();
    for (const key of [alone.key, withNext.key]) expect(await full.get(key)).toBeNull();
    await expect(full.transition(withNext.key, (e) => transitions.complete(e, 'late', new Date()))).rejects.toMatchObject({
      key: 'TASK_NOT_FOUND',
    });
    expect(errors).toMatchObject([{ key: 'LIMIT_EXCEEDED', details: { limit: 'retainedTasks' } }]);
    expect(nextErrors).toMatchObject([{ key: 'LIMIT_EXCEEDED', details: { limit: 'retainedTasks' } }]);
  } finally {
    await server.stop();
  }
});
