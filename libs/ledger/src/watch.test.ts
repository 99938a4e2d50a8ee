import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import { BUCKETS } from '@shrooms/protocol';
import { eventually, startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { Ledger } from './ledger.js';
import * as transitions from './transitions.js';
import { asked } from './testing/asked.js';
import { READ_AHEAD } from './read-last.js';

/** Ledger.watch with initial values (watch.ts), on a real nats-server, with another process writing. */
let nats: NatsWithConnection;
let other: NatsConnection;
let ledger: Ledger;
let writer: Ledger;
beforeAll(async () => {
  nats = await startNatsWithConnection();
  other = await connect({ servers: nats.url });
  ledger = await Ledger.open(nats.nc);
  writer = await Ledger.open(other);
});
afterAll(async () => {
  await other?.close();
  await nats?.stop();
});

it('gives the last value of each key, then every change once, while another process writes through its start', async () => {
  const keys = Array.from({ length: 40 }, (_, i) => writer.key('box', 'racing', `k${i}`));
  for (const k of keys.slice(0, 20)) await writer.create(k, asked(k));
  // The writer goes on creating and changing keys while the watch starts and reads.
  let writing = true;
  const written = (async () => {
    for (let i = 20; writing && i < keys.length; i++) {
      await writer.create(keys[i]!, asked(keys[i]!));
      await writer.transition(keys[i - 20]!, (e) => transitions.start(e, new Date()));
    }
  })();
  const seen = new Map<string, number[]>();
  const wrong: string[] = [];
  let ready = false;
  const stop = await ledger.watch(
    'box.racing.>',
    (s, isUpdate) => {
      const before = seen.get(s.key) ?? [];
      // nats.js may deliver an initial value again (its ordered consumer restarting); once the
      // initial values are in, every change comes once, after what came of its key before.
      if (ready && (!isUpdate || before.some((r) => r >= s.revision))) wrong.push(`${s.key}@${s.revision} after ${before.join(',')}`);
      seen.set(s.key, [...before, s.revision]);
    },
    () => (ready = true),
  );
  await eventually(() => expect(ready).toBe(true));
  writing = false;
  await written;
  const last = await writer.transition(keys[0]!, (e) => transitions.note(e, 'last', new Date()));
  await eventually(() => expect(seen.get(keys[0]!)?.at(-1)).toBe(last.revision));
  for (const k of keys) {
    const stored = await writer.get(k);
    const revisions = seen.get(k) ?? [];
    if (!stored) continue;
    // Nothing lost: the stored revision came by, last.
    expect(revisions.at(-1)).toBe(stored.revision);
    expect([...revisions].sort((a, b) => a - b)).toEqual(revisions);
  }
  expect(wrong).toEqual([]);
  stop();
});

it('follows changes with a consumer of new messages only: the one that read the initial values is let go', async () => {
  const keys = Array.from({ length: 5 }, (_, i) => writer.key('box', 'consumers', `k${i}`));
  for (const k of keys) await writer.create(k, asked(k));
  const seen: number[] = [];
  const stop = await ledger.watch('box.consumers.>', (s) => seen.push(s.revision));
  const later = await writer.transition(keys[0]!, (e) => transitions.start(e, new Date()));
  await eventually(() => expect(seen).toContain(later.revision));
  const jsm = await jetstreamManager(other);
  const filter = `$KV.${BUCKETS.tasks}.box.consumers.>`;
  // A consumer delivering the last value per subject is recounted over every subject on each
  // message it delivers (nats-server 2.9): the one that follows must deliver new ones only.
  await eventually(async () => {
    const following = (await jsm.consumers.list(`KV_${BUCKETS.tasks}`).next()).filter(
      (c) => c.config.filter_subject === filter && c.push_bound === true,
    );
    expect(following.map((c) => c.config.deliver_policy)).toEqual(['new']);
    return true;
  });
  stop();
});

it('takes its consumer for lost by 5-s heartbeats, makes another with the same, and goes on from where it was', async () => {
  const key = writer.key('box', 'lost', 'k');
  await writer.create(key, asked(key));
  const seen: number[] = [];
  const stop = await ledger.watch('box.lost.>', (s) => seen.push(s.revision));
  try {
    const jsm = await jetstreamManager(other);
    const filter = `$KV.${BUCKETS.tasks}.box.lost.>`;
    const following = async () =>
      (await jsm.consumers.list(`KV_${BUCKETS.tasks}`).next())
        .filter((c) => c.config.filter_subject === filter && c.config.deliver_policy !== 'last_per_subject')
        .map((c) => ({ name: c.name, heartbeatS: (c.config.idle_heartbeat ?? 0) / 1e9 }));
    // Its heartbeat is what it waits for before it takes its consumer for lost (nats.js made every
    // ordered consumer's 30 s whatever the KV asked: a watch whose server went away missed a minute).
    const [first] = await eventually(async () => {
      const f = await following();
      return f.length === 1 ? f : undefined;
    });
    expect(first!.heartbeatS).toBe(5);
    // Lost as on a server cut off from the others: removed under it, with nothing said.
    await jsm.consumers.delete(`KV_${BUCKETS.tasks}`, first!.name);
    const meanwhile = await writer.transition(key, (e) => transitions.start(e, new Date()));
    // The next one (the first is gone from the list at once; the new one comes after the missed heartbeats).
    const again = await eventually(async () => (await following()).find((c) => c.name !== first!.name), 90_000, 250);
    expect(again.heartbeatS).toBe(5);
    // What was written while it had none comes, and what is written after.
    const later = await writer.transition(key, (e) => transitions.complete(e, 'done', new Date()));
    await eventually(() => expect(seen.slice(-2)).toEqual([meanwhile.revision, later.revision]));
  } finally {
    stop();
  }
}, 120_000);

it('reads the initial values alone, to their end, with no consumer of changes', async () => {
  const keys = Array.from({ length: 5 }, (_, i) => writer.key('box', 'once', `k${i}`));
  for (const k of keys) await writer.create(k, asked(k));
  const seen: string[] = [];
  let ended = false;
  let ready!: () => void;
  const read = new Promise<void>((r) => (ready = r));
  const stop = await ledger.watch(
    'box.once.>',
    (s) => seen.push(s.key),
    () => ready(),
    () => (ended = true),
    { only: 'initial' },
  );
  await read;
  expect(seen.sort()).toEqual([...keys].sort());
  const jsm = await jetstreamManager(other);
  const filter = `$KV.${BUCKETS.tasks}.box.once.>`;
  const policies = (await jsm.consumers.list(`KV_${BUCKETS.tasks}`).next())
    .filter((c) => c.config.filter_subject === filter && c.config.headers_only !== true)
    .map((c) => c.config.deliver_policy);
  expect(policies).not.toContain('new');
  // A read to its end is not a watch that ended early.
  expect(ended).toBe(false);
  stop();
});

it('reads nothing and is ready at once when no key matches', async () => {
  let ready = false;
  const stop = await ledger.watch(
    'box.none.>',
    () => {},
    () => (ready = true),
    undefined,
    { only: 'initial' },
  );
  await eventually(() => ready);
  stop();
});

it('answers the reply-to subject of every delivery, so that nats-server 2.9 does not keep them all', async () => {
  const keys = Array.from({ length: 30 }, (_, i) => writer.key('box', 'answered', `k${i}`));
  for (const k of keys) await writer.create(k, asked(k));
  const acks = new Set<string>();
  const sub = other.subscribe(`$JS.ACK.KV_${BUCKETS.tasks}.>`, { callback: (_e, m) => void acks.add(m.subject) });
  await other.flush();
  const seen: number[] = [];
  let ready = false;
  const stop = await ledger.watch(
    'box.answered.>',
    (s) => seen.push(s.revision),
    () => (ready = true),
  );
  await eventually(() => expect(ready).toBe(true));
  for (const k of keys.slice(0, 10)) await writer.transition(k, (e) => transitions.start(e, new Date()));
  await eventually(() => expect(seen.length).toBeGreaterThanOrEqual(40));
  // One answer per delivery, initial values and changes alike (each ack subject names its message).
  await eventually(() => expect(acks.size).toBeGreaterThanOrEqual(seen.length));
  stop();
  sub.unsubscribe();
});

it('reads more initial values than the server may send ahead of their answers, every one, and lets its consumer go', async () => {
  const count = READ_AHEAD * 2 + 500;
  const keys = Array.from({ length: count }, (_, i) => writer.key('box', 'long', `k${i}`));
  for (let i = 0; i < count; i += 250) await Promise.all(keys.slice(i, i + 250).map((k) => writer.create(k, asked(k))));
  const acks = new Set<string>();
  const sub = other.subscribe(`$JS.ACK.KV_${BUCKETS.tasks}.>`, { callback: (_e, m) => void acks.add(m.subject) });
  await other.flush();
  const seen = new Set<string>();
  let ready!: () => void;
  const read = new Promise<void>((r) => (ready = r));
  const stop = await ledger.watch(
    'box.long.>',
    (s) => seen.add(s.key),
    () => ready(),
    undefined,
    { only: 'initial' },
  );
  await read;
  // Every key once: nats-server 2.9.10 leaves some behind when a last-per-subject consumer waits for acks.
  expect(seen.size).toBe(count);
  // Each delivery answered: the answer is what lets the server send the next.
  await eventually(() => expect(acks.size).toBeGreaterThanOrEqual(count));
  // The reading consumer leaves the server soon after the read (an ordered one would stay five minutes).
  const jsm = await jetstreamManager(other);
  const filter = `$KV.${BUCKETS.tasks}.box.long.>`;
  await eventually(async () => {
    const left = (await jsm.consumers.list(`KV_${BUCKETS.tasks}`).next()).filter((c) => c.config.filter_subject === filter);
    expect(left).toEqual([]);
    return true;
  });
  stop();
  sub.unsubscribe();
});
