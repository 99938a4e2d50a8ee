import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { startNatsServer } from '@shrooms/testing';
import { asShroomsError } from './jsonrpc.js';

describe('a NATS outage', () => {
  it("is NATS_UNAVAILABLE (retryable, with a retry delay) for the client's own errors, not an internal error", async () => {
    const errors: unknown[] = [await connect({ servers: 'nats://127.0.0.1:1', reconnect: false }).catch((e: unknown) => e)];
    const nats = await startNatsServer();
    const nc = await connect({ servers: nats.url });
    errors.push(await nc.request('nobody.listens', '', { timeout: 1000 }).catch((e: unknown) => e));
    await nc.close();
    errors.push(await nc.request('x', '').catch((e: unknown) => e));
    await nats.stop();
    for (const err of errors) {
      const se = asShroomsError(err);
      expect(se.key, String(err)).toBe('NATS_UNAVAILABLE');
      expect(se.retryable).toBe(true);
      expect(se.details.retryAfterSeconds).toBeGreaterThan(0);
    }
  });

  it('leaves an ordinary error that only mentions NATS internal', () => {
    expect(asShroomsError(new Error('nats connection closed')).key).toBe('INTERNAL');
  });
});
