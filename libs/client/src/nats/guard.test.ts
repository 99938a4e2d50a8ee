import type { NatsConnection } from '@nats-io/nats-core';
import { subjects } from '@shrooms/protocol';
import { connectNats, createLogger } from '@shrooms/runtime';
import { startNatsServer, type NatsServerHandle } from '@shrooms/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { askGuard, guardRefusal } from './guard.js';

const log = createLogger('guard-test', 'silent');
const req = { machine: 'homeserver', session: 'review', taskId: 'review:m1', origin: { device: 'laptop.home' } };

describe('askGuard', () => {
  let server: NatsServerHandle;
  let nc: NatsConnection;
  let responder: NatsConnection;

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connectNats({ NATS_URL: server.url }, log, 'guard-test');
    responder = await connectNats({ NATS_URL: server.url }, log, 'guard-test');
  });
  afterEach(async () => {
    await responder.close();
    responder = await connectNats({ NATS_URL: server.url }, log, 'guard-test');
  });
  afterAll(async () => {
    await nc.close();
    await responder.close();
    await server.stop();
  });

  it('fails closed with GUARD_UNAVAILABLE when no guard runs', async () => {
    const d = await askGuard(nc, req, { timeoutMs: 500 });
    expect(d.admit).toBe(false);
    expect(guardRefusal(d)?.key).toBe('GUARD_UNAVAILABLE');
  });

  it('fails closed with GUARD_UNAVAILABLE when the guard does not answer in time', async () => {
    responder.subscribe(subjects.guardAdmit(), { callback: () => {} });
    await responder.flush();
    const d = await askGuard(nc, req, { timeoutMs: 200 });
    expect(d.admit).toBe(false);
    expect(d.error?.key).toBe('GUARD_UNAVAILABLE');
  });

  it('fails closed when the answer cannot be read', async () => {
    responder.subscribe(subjects.guardAdmit(), { callback: (_e, m) => void m.respond(JSON.stringify({ ok: true, admit: 'yes' })) });
    await responder.flush();
    expect((await askGuard(nc, req, { timeoutMs: 1000 })).error?.key).toBe('GUARD_UNAVAILABLE');
  });

  it('fails closed when a refusal carries no reason', async () => {
    responder.subscribe(subjects.guardAdmit(), { callback: (_e, m) => void m.respond(JSON.stringify({ ok: true, admit: false })) });
    await responder.flush();
    const d = await askGuard(nc, req, { timeoutMs: 1000 });
    expect(d.admit).toBe(false);
    expect(d.error?.key).toBe('GUARD_UNAVAILABLE');
  });

  it("passes the guard's own error on as the refusal", async () => {
    responder.subscribe(subjects.guardAdmit(), {
      callback: (_e, m) => void m.respond(JSON.stringify({ ok: false, error: { key: 'INVALID_PARAMS', message: 'bad' } })),
    });
    await responder.flush();
    expect(guardRefusal(await askGuard(nc, req, { timeoutMs: 1000 }))?.key).toBe('INVALID_PARAMS');
  });

  it('returns an admission as the guard gave it', async () => {
    responder.subscribe(subjects.guardAdmit(), {
      callback: (_e, m) => void m.respond(JSON.stringify({ ok: true, admit: true, hold: true })),
    });
    await responder.flush();
    const d = await askGuard(nc, req, { timeoutMs: 1000 });
    expect(d).toEqual({ admit: true, hold: true });
    expect(guardRefusal(d)).toBeUndefined();
  });

  it('turns a refusal into the error to answer with, details included', async () => {
    const error = { key: 'LOOP_GUARD', message: 'too many', details: { retryAfterSeconds: 42 } };
    responder.subscribe(subjects.guardAdmit(), { callback: (_e, m) => void m.respond(JSON.stringify({ ok: true, admit: false, error })) });
    await responder.flush();
    const err = guardRefusal(await askGuard(nc, req, { timeoutMs: 1000 }));
    expect(err?.key).toBe('LOOP_GUARD');
    expect(err?.spec.code).toBe(-32050);
    expect(err?.details.retryAfterSeconds).toBe(42);
  });
});
