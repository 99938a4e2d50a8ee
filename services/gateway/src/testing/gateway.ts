/**
 * For the gateway's unit tests: the gateway built as main.ts builds it (`buildApp`, nothing
 * listening), on a real nats-server of the test file's own, machine `box` unless `env` says
 * otherwise, admitting everything (GATEWAY_GUARD=off) unless `env` says otherwise.
 */
import { Ledger, SignalField } from '@shrooms/ledger';
import { createLogger, loadConfig } from '@shrooms/runtime';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { afterAll, beforeAll } from 'vitest';
import { buildApp, type Gateway } from '../app.js';
import { GatewayConfigSchema } from '../config.js';

export interface TestGateway {
  readonly nats: NatsWithConnection;
  readonly ledger: Ledger;
  readonly gw: Gateway;
}

/** Starts it before the file's tests and stops it after them; read the fields inside tests. */
export function useTestGateway(env: Record<string, string> = {}): TestGateway {
  let nats: NatsWithConnection | undefined;
  let ledger: Ledger | undefined;
  let gw: Gateway | undefined;
  beforeAll(async () => {
    nats = await startNatsWithConnection();
    ledger = await Ledger.open(nats.nc);
    const config = loadConfig(GatewayConfigSchema, { SHROOMS_MACHINE: 'box', GATEWAY_GUARD: 'off', LOG_LEVEL: 'silent', ...env });
    gw = await buildApp({ nc: nats.nc, log: createLogger('test', 'silent'), config, ledger, signals: await SignalField.open(nats.nc) });
  });
  afterAll(async () => {
    await gw?.close();
    await nats?.stop();
  });
  const ready = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the test gateway is read inside tests, once started');
    return v;
  };
  return {
    get nats() {
      return ready(nats);
    },
    get ledger() {
      return ready(ledger);
    },
    get gw() {
      return ready(gw);
    },
  };
}
