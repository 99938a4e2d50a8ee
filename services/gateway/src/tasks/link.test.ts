import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsServerHandle } from '@shrooms/testing';
import type { NatsConnection } from '@shrooms/runtime';
import { NatsLink } from './link.js';

let nats: NatsServerHandle | undefined;
let nc: NatsConnection | undefined;

afterEach(async () => {
  await nc?.close();
  await nats?.stop();
  nc = nats = undefined;
});

async function linked(graceMs: number) {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  const link = new NatsLink(nc, { graceMs });
  const outages: string[] = [];
  link.onOutage((err) => outages.push(err.key));
  return { link, outages };
}

describe("the gateway's NATS link", () => {
  it('declares an outage once the server has been gone for the grace, and ends it on reconnect', async () => {
    const { link, outages } = await linked(200);
    expect(link.down).toBeUndefined();
    nats!.kill();
    const declared = await new Promise<string>((resolve) => link.onOutage((err) => resolve(err.key)));
    expect(declared).toBe('NATS_UNAVAILABLE');
    expect(outages).toEqual(['NATS_UNAVAILABLE']);
    expect(link.down?.key).toBe('NATS_UNAVAILABLE');
    expect(link.down?.retryAfterSeconds).toBeGreaterThan(0);
    await nats!.restart();
    await new Promise<void>((resolve) => {
      const check = () => (link.down === undefined ? resolve() : setTimeout(check, 50));
      check();
    });
    expect(link.down).toBeUndefined();
  });
});
