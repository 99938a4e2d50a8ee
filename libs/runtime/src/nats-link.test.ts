import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { NatsLink } from './nats-link.js';

let nats: NatsWithConnection | undefined;

afterEach(async () => {
  await nats?.stop();
  nats = undefined;
});

async function linked(graceMs: number) {
  nats = await startNatsWithConnection({ connection: { maxReconnectAttempts: -1, reconnectTimeWait: 100 } });
  const link = new NatsLink(nats.nc, { graceMs, who: 'this gateway' });
  const outages: string[] = [];
  link.onOutage((err) => outages.push(err.key));
  return { link, outages };
}

describe('the NATS link', () => {
  it('declares an outage once the server has been gone for the grace, and ends it on reconnect', async () => {
    const { link, outages } = await linked(200);
    expect(link.down).toBeUndefined();
    nats!.nats.kill();
    const declared = await new Promise<string>((resolve) => link.onOutage((err) => resolve(err.key)));
    expect(declared).toBe('NATS_UNAVAILABLE');
    expect(outages).toEqual(['NATS_UNAVAILABLE']);
    expect(link.down?.key).toBe('NATS_UNAVAILABLE');
    expect(link.down?.retryAfterSeconds).toBeGreaterThan(0);
    expect(link.down?.message).toMatch(/^this gateway has lost its NATS connection \(\d+ s ago\)/);
    expect(link.outageMs).toBeGreaterThanOrEqual(0);
    await nats!.nats.restart();
    await eventually(() => link.down === undefined);
    expect(link.down).toBeUndefined();
    expect(link.outageMs).toBeUndefined();
  });
});
