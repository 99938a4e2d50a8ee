import type { NatsConnection } from '@nats-io/nats-core';
import { ShroomsError, subjects, toWireError, type DeliverRequest } from '@shrooms/protocol';
import { connectNats, createLogger } from '@shrooms/runtime';
import { startNatsServer, type NatsServerHandle } from '@shrooms/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bridgeClient } from './bridge.js';

const log = createLogger('bridge-client-test', 'silent');
const req: DeliverRequest = {
  machine: 'homeserver',
  session: 'review',
  message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
  origin: { device: 'laptop.home' },
  metadata: {},
};
const task = { id: 'review:m1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } };
const never = new Promise<never>(() => {});

describe('bridgeClient.deliverQuietly', () => {
  let server: NatsServerHandle;
  let nc: NatsConnection;
  let responder: NatsConnection;
  const deliver = subjects.bridge(req.machine, req.session, 'deliver');

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connectNats({ NATS_URL: server.url }, log, 'bridge-client-test');
    responder = await connectNats({ NATS_URL: server.url }, log, 'bridge-client-test');
  });
  afterEach(async () => {
    await responder.close();
    responder = await connectNats({ NATS_URL: server.url }, log, 'bridge-client-test');
  });
  afterAll(async () => {
    await nc.close();
    await responder.close();
    await server.stop();
  });

  it('asks the bridge for quiet, saying how long it waits, and resolves with what the caller sees, the bridge sending nothing', async () => {
    const asked: unknown[] = [];
    let seen!: (s: string) => void;
    responder.subscribe(deliver, {
      callback: (_e, m) => {
        asked.push(m.json());
        seen('stored');
      },
    });
    await responder.flush();
    const before = responder.stats().outMsgs;
    const r = await bridgeClient(nc, { timeoutMs: 5000 }).deliverQuietly(req, new Promise<string>((res) => (seen = res)));
    expect(r).toEqual({ seen: 'stored' });
    // Quiet (a later "taken" passed over), and how long it waits to see the task (a bridge holding the
    // create writes it sooner).
    expect(asked).toEqual([{ ...req, quiet: true, takenLater: true, seenWithinMs: 5000 }]);
    expect(responder.stats().outMsgs - before).toBe(0);
  });

  it("passes over the bridge's later 'taken' answer and resolves with what the caller sees", async () => {
    let seen!: (s: string) => void;
    responder.subscribe(deliver, {
      // The bridge's answer to a delivery it took quietly (for nats-server's reply tracking), here before the task is seen.
      callback: (_e, m) => {
        m.respond(JSON.stringify({ ok: true, taken: true }));
        void responder.flush().then(() => seen('stored'));
      },
    });
    await responder.flush();
    expect(await bridgeClient(nc, { timeoutMs: 5000 }).deliverQuietly(req, new Promise<string>((res) => (seen = res)))).toEqual({
      seen: 'stored',
    });
  });

  it("takes a bridge's 'taken' for no outcome: BRIDGE_UNAVAILABLE when the task is not seen in time", async () => {
    responder.subscribe(deliver, { callback: (_e, m) => void m.respond(JSON.stringify({ ok: true, taken: true })) });
    await responder.flush();
    await expect(bridgeClient(nc, { timeoutMs: 300 }).deliverQuietly(req, never)).rejects.toMatchObject({ key: 'BRIDGE_UNAVAILABLE' });
  });

  it("resolves with the bridge's reply when it sends one", async () => {
    responder.subscribe(deliver, { callback: (_e, m) => void m.respond(JSON.stringify({ ok: true, task, v: 3 })) });
    await responder.flush();
    expect(await bridgeClient(nc, { timeoutMs: 5000 }).deliverQuietly(req, never)).toEqual({ reply: { ok: true, task, v: 3 } });
  });

  it("throws the bridge's refusal as the ShroomsError it was", async () => {
    const refusal = new ShroomsError('QUEUE_FULL', 'full');
    responder.subscribe(deliver, {
      callback: (_e, m) => void m.respond(JSON.stringify({ ok: false, error: toWireError(refusal) })),
    });
    await responder.flush();
    await expect(bridgeClient(nc, { timeoutMs: 5000 }).deliverQuietly(req, never)).rejects.toMatchObject({ key: 'QUEUE_FULL' });
  });

  it('is BRIDGE_UNAVAILABLE at once when no bridge serves the session', async () => {
    await expect(bridgeClient(nc, { timeoutMs: 60_000 }).deliverQuietly(req, never)).rejects.toMatchObject({
      key: 'BRIDGE_UNAVAILABLE',
    });
  });

  it('is BRIDGE_UNAVAILABLE when neither a reply nor the task comes in time', async () => {
    responder.subscribe(deliver, { callback: () => {} });
    await responder.flush();
    await expect(bridgeClient(nc, { timeoutMs: 200 }).deliverQuietly(req, never)).rejects.toMatchObject({ key: 'BRIDGE_UNAVAILABLE' });
  });
});
