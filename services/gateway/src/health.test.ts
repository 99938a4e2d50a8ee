/**
 * `/readyz` on a real nats-server: its ledger check writes a `_health.` key, and anyone who reaches
 * the port may ask, so a burst of probes must cost one round of checks, not one write each.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Ledger, SignalField } from '@shrooms/ledger';
import { createLogger, healthKey, loadConfig } from '@shrooms/runtime';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { buildApp, type Gateway } from './app.js';
import { GatewayConfigSchema } from './config.js';

let nats: NatsWithConnection;
let ledger: Ledger;
let gw: Gateway;

beforeAll(async () => {
  nats = await startNatsWithConnection();
  ledger = await Ledger.open(nats.nc);
  const config = loadConfig(GatewayConfigSchema, { SHROOMS_MACHINE: 'box', GATEWAY_GUARD: 'off', LOG_LEVEL: 'silent' });
  gw = await buildApp({ nc: nats.nc, log: createLogger('test', 'silent'), config, ledger, signals: await SignalField.open(nats.nc) });
});

afterAll(async () => {
  await gw?.close();
  await nats?.stop();
});

/** Messages ever stored in the ledger's stream (its last sequence): each write adds one. */
const lastSeq = async () => (await ledger.kv.status()).streamInfo.state.last_seq;

it('answers a burst of /readyz probes with one ledger write', async () => {
  const before = await lastSeq();
  const answers = await Promise.all(Array.from({ length: 5 }, () => gw.app.inject({ method: 'GET', url: '/readyz' })));
  expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
  expect(await lastSeq()).toBe(before + 1);
  expect((await ledger.kv.get(healthKey('box', 'gateway')))?.revision).toBe(before + 1);
});
