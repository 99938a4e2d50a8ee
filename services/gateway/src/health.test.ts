/**
 * `/readyz` on a real nats-server: its ledger check writes a `_health.` key, and anyone who reaches
 * the port may ask, so a burst of probes must cost one round of checks, not one write each.
 */
import { expect, it } from 'vitest';
import { healthKey } from '@shrooms/runtime';
import { useTestGateway } from './testing/gateway.js';

const t = useTestGateway();

/** Messages ever stored in the ledger's stream (its last sequence): each write adds one. */
const lastSeq = async () => (await t.ledger.kv.status()).streamInfo.state.last_seq;

it('answers a burst of /readyz probes with one ledger write', async () => {
  const before = await lastSeq();
  const answers = await Promise.all(Array.from({ length: 5 }, () => t.gw.app.inject({ method: 'GET', url: '/readyz' })));
  expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
  expect(await lastSeq()).toBe(before + 1);
  expect((await t.ledger.kv.get(healthKey('box', 'gateway')))?.revision).toBe(before + 1);
});
