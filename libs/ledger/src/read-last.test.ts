import { afterAll, beforeAll, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { BUCKETS } from '@shrooms/protocol';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { Ledger } from './ledger.js';
import { readLastValues, READ_AHEAD } from './read-last.js';
import { asked } from './testing/asked.js';
import * as transitions from './transitions.js';

/** readLastValues on a real nats-server: the initial read of a watch (watch.test.ts covers the rest). */
let nats: NatsWithConnection;
let ledger: Ledger;
beforeAll(async () => {
  nats = await startNatsWithConnection();
  ledger = await Ledger.open(nats.nc);
});
afterAll(async () => {
  await nats?.stop();
});

it('ends without its last value when its consumer goes away mid-read, so that its watch starts again', async () => {
  const count = READ_AHEAD * 2 + 500;
  const keys = Array.from({ length: count }, (_, i) => ledger.key('box', 'cut', `k${i}`));
  for (let i = 0; i < count; i += 250) await Promise.all(keys.slice(i, i + 250).map((k) => ledger.create(k, asked(k))));
  const jsm = await jetstreamManager(nats.nc);
  let seen = 0;
  const read = await readLastValues(nats.nc, BUCKETS.tasks, 'box.cut.>', () => {
    // After the first value the consumer goes; what the server had sent ahead still comes.
    if (seen++ === 0) void jsm.consumers.delete(`KV_${BUCKETS.tasks}`, read.consumer);
  });
  expect(read.count).toBe(count);
  expect(await read.done).toBe(false);
  expect(seen).toBeLessThanOrEqual(READ_AHEAD + 1);
});

it('takes nothing more once stopped, and leaves no subscription behind', async () => {
  const keys = Array.from({ length: 50 }, (_, i) => ledger.key('box', 'stopped', `k${i}`));
  for (const k of keys) await ledger.create(k, asked(k));
  const subscriptions = () => (nats.nc as unknown as { protocol: { subscriptions: { size(): number } } }).protocol.subscriptions.size();
  const before = subscriptions();
  let seen = 0;
  const read = await readLastValues(nats.nc, BUCKETS.tasks, 'box.stopped.>', () => {
    if (++seen === 10) read.stop();
  });
  expect(await read.done).toBe(false);
  // Changes stored after the stop would have come to a consumer still subscribed.
  for (const k of keys.slice(0, 20)) await ledger.transition(k, (e) => transitions.start(e, new Date()));
  await nats.nc.flush();
  expect(seen).toBe(10);
  expect(subscriptions()).toBe(before);
});
