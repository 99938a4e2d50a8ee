import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import { BUCKETS } from '@shrooms/protocol';
import { eventually, startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { NatsLink, casCreate, isNatsOutage, isStreamFull } from '@shrooms/runtime';
import { intake } from './intake.js';
import { Ledger } from './ledger.js';
import * as transitions from './transitions.js';
import { asked } from './testing/asked.js';

let nats: NatsWithConnection;
let nc: NatsConnection;
let other: NatsConnection;
beforeAll(async () => {
  nats = await startNatsWithConnection();
  nc = nats.nc;
  other = await connect({ servers: nats.url });
});
afterAll(async () => {
  await other?.close();
  await nats?.stop();
});

it('changes a task it wrote last without reading it first', async () => {
  const ledger = await Ledger.open(nc);
  const key = ledger.key('box', 's', 'own-writes');
  await ledger.create(key, asked('own-writes'));
  const before = ledger.reads;
  const started = await ledger.transition(key, (e) => transitions.start(e, new Date()));
  const done = await ledger.transition(key, (e) => transitions.complete(e, 'ok', new Date()));
  expect(ledger.reads - before).toBe(0);
  expect(done.entry.v).toBe(3);
  expect((await ledger.get(key))!.revision).toBe(done.revision);
  expect(started.revision).toBeLessThan(done.revision);
});

it('reads and applies the change again when another writer changed the task meanwhile', async () => {
  const mine = await Ledger.open(nc);
  const theirs = await Ledger.open(other);
  const key = mine.key('box', 's', 'raced');
  await mine.create(key, asked('raced'));
  await theirs.transition(key, (e) => transitions.cancel(e, 'someone else', new Date()));
  // From the remembered (now stale) value `start` would succeed; the ledger says canceled.
  await expect(mine.transition(key, (e) => transitions.start(e, new Date()))).rejects.toMatchObject({ key: 'UNSUPPORTED_OPERATION' });
  expect((await mine.get(key))!.entry.task.status.state).toBe('TASK_STATE_CANCELED');
});

it('decides "no change" only on a fresh read, never on the remembered value', async () => {
  const mine = await Ledger.open(nc);
  const theirs = await Ledger.open(other);
  const key = mine.key('box', 's', 'declined');
  await mine.create(key, asked('declined'));
  await theirs.transition(key, (e) => transitions.annotate(e, { note: 'theirs' }));
  const out = await mine.transition(key, (e) => (e.task.metadata?.note === 'theirs' ? null : transitions.annotate(e, { note: 'mine' })));
  expect(out.entry.task.metadata?.note).toBe('theirs');
  expect((await mine.get(key))!.entry.task.metadata?.note).toBe('theirs');
});

it('is not fooled by a caller changing the entry object it was given back', async () => {
  const ledger = await Ledger.open(nc);
  const key = ledger.key('box', 's', 'mutated');
  const created = await ledger.create(key, asked('mutated'));
  created!.entry.task.metadata = { scribbled: true };
  const started = await ledger.transition(key, (e) => transitions.start(e, new Date()));
  expect(started.entry.task.metadata?.scribbled).toBeUndefined();
});

it('reads at a revision its caller has seen: an older answer is asked again, bounded, then refused', async () => {
  const mine = await Ledger.open(nc);
  const theirs = await Ledger.open(other);
  const key = mine.key('box', 's', 'at-least');
  const created = (await mine.create(key, asked('at-least')))!;
  // Asked for the next revision before it exists (what a lagging replica answers looks the same):
  // the read waits for it instead of answering the older one.
  const reading = mine.get(key, { atLeast: created.revision + 1 });
  await new Promise((r) => setTimeout(r, 60));
  const started = await theirs.transition(key, (e) => transitions.start(e, new Date()));
  const read = await reading;
  expect([read?.revision, read?.entry.task.status.state]).toEqual([started.revision, 'TASK_STATE_WORKING']);
  // A revision no write brings: a precise, retryable refusal after a bounded wait, never a hang.
  await expect(mine.get(key, { atLeast: started.revision + 100 })).rejects.toMatchObject({
    key: 'INTERNAL',
    message: expect.stringContaining(`have not caught up with revision ${started.revision + 100}`),
  });
  // Deleted since: the delete is the answer (null), not a lag.
  await mine.kv.delete(key);
  expect(await mine.get(key, { atLeast: started.revision })).toBeNull();
});

it('answers a resend that reaches the intake with the stored task, and refuses an id reused for other content', async () => {
  const ledger = await Ledger.open(nc);
  const req = (text: string, device = 'laptop') => ({
    machine: 'box',
    session: 's',
    message: { messageId: 'resent', role: 'ROLE_USER' as const, parts: [{ text }] },
    metadata: {},
    origin: { device },
  });
  const first = await intake(ledger, req('hi'), { queued: false });
  expect(first.created).toBe(true);
  const again = await intake(ledger, req('hi'), { queued: false });
  expect(again).toMatchObject({ created: false, stored: { revision: first.stored.revision } });
  await expect(intake(ledger, req('something else'), { queued: false })).rejects.toMatchObject({ key: 'MESSAGE_ID_CONFLICT' });
  await expect(intake(ledger, req('hi', 'pi5'), { queued: false })).rejects.toMatchObject({ key: 'MESSAGE_ID_CONFLICT' });
});

it('retains at most retainedTasks: one more new task is refused, nothing is dropped, retained ones still change', async () => {
  // A server of its own: the bucket's limit is set when it is made.
  const server = await startNatsWithConnection();
  const conn = server.nc;
  const ledger = await Ledger.open(conn, { limits: { retainedTasks: 3 } });
  const keys = ['a', 'b', 'c'].map((id) => ledger.key('box', 's', `full-${id}`));
  for (const [i, key] of keys.entries()) expect(await ledger.create(key, asked(`full-${i}`))).not.toBeNull();
  const one = ledger.key('box', 's', 'full-d');
  await expect(ledger.create(one, asked('full-d'))).rejects.toMatchObject({
    key: 'LIMIT_EXCEEDED',
    details: { limit: 'retainedTasks', max: 3, setting: 'LIMIT_RETAINED_TASKS' },
  });
  expect(await ledger.get(one)).toBeNull();
  // At the limit every retained task can still move on (its key replaces its own last value).
  for (const key of keys) await ledger.transition(key, (e) => transitions.start(e, new Date()));
  for (const key of keys) expect((await ledger.get(key))!.entry.task.status.state).toBe('TASK_STATE_WORKING');
  await server.stop();
});

it("a full ledger's own refusal, met outside the create path, is not taken for a NATS outage", async () => {
  const server = await startNatsWithConnection();
  const ledger = await Ledger.open(server.nc, { limits: { retainedTasks: 1 } });
  expect(await ledger.create(ledger.key('box', 's', 'only'), asked('only'))).not.toBeNull();
  // A write of a new key that does not go through Ledger.create: JetStream's own error, as it comes.
  const err = await casCreate(ledger.kv, ledger.key('box', 's', 'raw'), new TextEncoder().encode('{}')).catch((e: unknown) => e);
  expect(isStreamFull(err)).toBe(true);
  expect((err as { status?: number }).status).toBe(503);
  expect(isNatsOutage(err)).toBe(false);
  await server.stop();
});

it('a bucket made before, or with another limit, takes the limit the gateway opens it with', async () => {
  const server = await startNatsWithConnection();
  const conn = server.nc;
  await Ledger.open(conn);
  const ledger = await Ledger.open(conn, { limits: { retainedTasks: 1 }, owner: true });
  expect(await ledger.create(ledger.key('box', 's', 'first'), asked('first'))).not.toBeNull();
  await expect(ledger.create(ledger.key('box', 's', 'second'), asked('second'))).rejects.toMatchObject({
    details: { limit: 'retainedTasks', max: 1 },
  });
  await server.stop();
});

it("keeps the owner's limit when another process opens the bucket with its own setting", async () => {
  const server = await startNatsWithConnection();
  const peer = await connect({ servers: server.url });
  const gateway = await Ledger.open(server.nc, { limits: { retainedTasks: 2 }, owner: true });
  // A bench preload, a tool or a test opening later with a setting of its own …
  const other = await Ledger.open(peer, { limits: { retainedTasks: 5 } });
  expect(other.retained).toBe(2);
  const jsm = await jetstreamManager(server.nc);
  expect((await jsm.streams.info(`KV_${BUCKETS.tasks}`)).config.max_msgs).toBe(2);
  // … and the bucket still refuses the third task, whichever of them writes it.
  for (const id of ['one', 'two']) expect(await other.create(other.key('box', 's', id), asked(id))).not.toBeNull();
  await expect(gateway.create(gateway.key('box', 's', 'three'), asked('three'))).rejects.toMatchObject({
    details: { limit: 'retainedTasks', max: 2 },
  });
  await expect(other.create(other.key('box', 's', 'three'), asked('three'))).rejects.toMatchObject({
    details: { limit: 'retainedTasks', max: 2 },
  });
  // The owner opening again with a new setting is what changes it.
  await Ledger.open(server.nc, { limits: { retainedTasks: 3 }, owner: true });
  expect((await jsm.streams.info(`KV_${BUCKETS.tasks}`)).config.max_msgs).toBe(3);
  await peer.close();
  await server.stop();
});

it("skips its own writes in a watch that asks so, tells them to its followers, and passes on everyone else's", async () => {
  const mine = await Ledger.open(nc);
  const theirs = await Ledger.open(other);
  const followed: number[] = [];
  const unfollow = mine.followWrites((s) => followed.push(s.revision));
  const seen: number[] = [];
  const stop = await mine.watch('box.skips.>', (s) => seen.push(s.revision), undefined, undefined, {
    only: 'updates',
    ownWrites: 'skip',
  });
  const [a, b, c] = ['a', 'b', 'c'].map((id) => mine.key('box', 'skips', id)) as [string, string, string];
  const ours = [(await mine.create(a, asked('a')))!.revision, (await mine.transition(a, (e) => transitions.start(e, new Date()))).revision];
  const others = [
    (await theirs.transition(a, (e) => transitions.complete(e, 'done elsewhere', new Date()))).revision,
    (await theirs.create(b, asked('b')))!.revision,
  ];
  ours.push((await mine.create(c, asked('c')))!.revision);
  // The watch is ordered: once the last write has come by, every earlier one has too.
  const last = (await theirs.transition(b, (e) => transitions.start(e, new Date()))).revision;
  others.push(last);
  await eventually(() => expect(seen).toContain(last));
  expect(seen).toEqual(others);
  expect(followed).toEqual(ours);
  expect(mine.ownSkipped).toBe(ours.length);
  stop();
  unfollow();
});

/**
 * A ledger told of its process's NATS link, on a real nats-server that is killed and started again:
 * while the connection is lost it refuses at once — a write against a server that is gone would
 * otherwise keep trying for WRITE_DEADLINE_MS (a minute, past this file's test timeout) — and works
 * again once the connection is back.
 */
describe('with its NATS link', () => {
  let away: NatsWithConnection | undefined;
  afterEach(async () => {
    await away?.stop();
    away = undefined;
  });

  it('refuses reads and writes at once while the NATS link is lost, and writes nothing', async () => {
    away = await startNatsWithConnection({ connection: { maxReconnectAttempts: -1, reconnectTimeWait: 100 } });
    const link = new NatsLink(away.nc, { graceMs: 100, who: 'this bridge' });
    const ledger = await Ledger.open(away.nc, { link });
    const key = ledger.key('box', 's', 'away');
    await ledger.create(key, asked('away'));
    const started = await ledger.transition(key, (e) => transitions.start(e, new Date()));

    away.nats.kill();
    await eventually(() => link.outageMs !== undefined);
    const refusal = {
      key: 'NATS_UNAVAILABLE',
      message: expect.stringMatching(/^the ledger is out of reach: NATS connection lost \d+ s ago; /),
    };
    // From the value it wrote last (no read), from a read, and a read alone: each refused, none waits.
    const complete = ledger.transition(key, (e) => transitions.complete(e, 'done', new Date()));
    await expect(complete).rejects.toMatchObject({ ...refusal, message: expect.stringContaining(`${key} was not written`) });
    expect(isNatsOutage(await complete.catch((e: unknown) => e))).toBe(true);
    await expect(ledger.get(key)).rejects.toMatchObject({ ...refusal, message: expect.stringContaining(`${key} was not read`) });
    await expect(ledger.create(ledger.key('box', 's', 'new'), asked('new'))).rejects.toMatchObject(refusal);

    await away.nats.restart();
    await eventually(() => link.outageMs === undefined);
    // Nothing of the refused writes reached the ledger; it takes them now.
    const now = await ledger.get(key);
    expect([now?.revision, now?.entry.task.status.state]).toEqual([started.revision, 'TASK_STATE_WORKING']);
    expect(await ledger.get(ledger.key('box', 's', 'new'))).toBeNull();
    const done = await ledger.transition(key, (e) => transitions.complete(e, 'done', new Date()));
    expect(done.entry.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('keeps trying as before when it has no link to ask', async () => {
    away = await startNatsWithConnection({ connection: { maxReconnectAttempts: -1, reconnectTimeWait: 100 } });
    const ledger = await Ledger.open(away.nc);
    const key = ledger.key('box', 's', 'no-link');
    await ledger.create(key, asked('no-link'));
    away.nats.kill();
    const write = ledger.transition(key, (e) => transitions.start(e, new Date()));
    let settled = false;
    void write.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Still trying after the link's grace would have passed: back in time, the write lands.
    await new Promise((r) => setTimeout(r, 500));
    expect(settled).toBe(false);
    await away.nats.restart();
    expect((await write).entry.task.status.state).toBe('TASK_STATE_WORKING');
  });
});
