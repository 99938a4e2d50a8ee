/**
 * Every admitter (guard replicas, gateways with GATEWAY_GUARD=local) makes the buckets when they are
 * missing, so on a fresh server several race to create them: each must come up, none fail its start.
 * The race is rare (measured on nats-server 2.9.10: one loser in 30 rounds of six creators, answered
 * 10065 "subjects overlap"), so the retry's rule (`transientOrMadeMeanwhile`) is checked on the errors themselves in libs/runtime.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { connectNats, createLogger } from '@shrooms/runtime';
import { startNatsServer } from '@shrooms/testing';
import { expect, it } from 'vitest';
import { AdmissionConfigSchema } from './config.js';
import { openAdmission } from './open.js';

const log = createLogger('admission-open-test', 'silent');
const config = { ...AdmissionConfigSchema.parse({}), SHROOMS_REPLICAS: 1 };

it('opens with several admitters making its buckets at once on fresh servers', async () => {
  for (let round = 0; round < 10; round++) {
    const server = await startNatsServer();
    const conns: NatsConnection[] = [];
    try {
      for (let i = 0; i < 6; i++) conns.push(await connectNats({ NATS_URL: server.url }, log, `admitter ${i}`));
      const opened = await Promise.allSettled(conns.map((nc) => openAdmission({ nc, log, config })));
      expect(opened.map((o) => (o.status === 'rejected' ? String(o.reason) : 'opened'))).toEqual(Array(6).fill('opened'));
      await Promise.all(opened.map((o) => (o.status === 'fulfilled' ? o.value.close() : undefined)));
    } finally {
      for (const nc of conns) await nc.close();
      await server.stop();
    }
  }
});
