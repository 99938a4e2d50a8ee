import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS } from '@shrooms/protocol';
import { connectNats, createLogger } from '@shrooms/runtime';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PolicyOverrides } from './overrides.js';

/** The rules set through the control endpoint, on a real nats-server, as each admitter opens them. */
const log = createLogger('overrides-test', 'silent');
let nats: NatsWithConnection;
let conns: NatsConnection[];

beforeAll(async () => {
  nats = await startNatsWithConnection();
  conns = [nats.nc, await connectNats({ NATS_URL: nats.url }, log, 'second admitter')];
});
afterAll(async () => {
  await conns?.[1]?.close();
  await nats?.stop();
});

it('opens with the stored rules in hand, a removed one not among them, following with one consumer each', async () => {
  const first = await PolicyOverrides.open(conns[0]!, { replicas: 1, log });
  expect(first.rules.size).toBe(0);
  await first.set('home/review', { devices: ['laptop'] });
  await first.set('home/*', { devices: ['phone'] });
  await first.clear('home/*');

  const second = await PolicyOverrides.open(conns[1]!, { replicas: 1, log });
  expect([...second.rules]).toEqual([['home/review', { devices: ['laptop'] }]]);
  // Only the two watches: counting the stored rules with kv.keys() left a consumer on the server
  // for five minutes after each open.
  const jsm = await jetstreamManager(conns[0]!);
  expect(await jsm.consumers.list(`KV_${BUCKETS.guardPolicy}`).next()).toHaveLength(2);
  first.close();
  second.close();
});
