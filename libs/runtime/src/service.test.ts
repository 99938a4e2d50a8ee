import { TimeoutError } from '@nats-io/nats-core';
import { ERRORS, ShroomsError } from '@shrooms/protocol';
import { startNatsServer, tempDir } from '@shrooms/testing';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from './log.js';
import { connectNats } from './nats.js';
import { NO_REPLY, REPLY_TAKEN, addService, jsonEndpoint, requestJson, type ServiceMsg } from './service.js';

/**
 * The error a NATS service endpoint answers with when its handler failed. The endpoint's group and
 * message are in-process stand-ins (what is checked is the mapping, not NATS); the errors thrown are
 * the NATS client's own classes. The machines tests see the same over real NATS on a machine cut off.
 */
async function answerTo(thrown: unknown): Promise<{ code: number; error: { key: string } }> {
  let handler: ((err: Error | null, msg: ServiceMsg) => void) | undefined;
  jsonEndpoint(
    { addEndpoint: ((_name: string, opts: { handler: typeof handler }) => void (handler = opts.handler)) as never },
    'probe',
    { subject: 'probe' },
    (d) => d,
    async () => {
      throw thrown;
    },
    createLogger('service-test', 'silent'),
  );
  return new Promise((resolve) => {
    const msg = {
      json: () => ({}),
      headers: undefined,
      respond: () => true,
      respondError: (code: number, _description: string, data: string) => resolve({ code, error: JSON.parse(data).error }),
    } as unknown as ServiceMsg;
    handler!(null, msg);
  });
}

describe('jsonEndpoint', () => {
  it('answers a handler whose NATS request timed out with the retryable NATS_UNAVAILABLE, not INTERNAL', async () => {
    const r = await answerTo(new TimeoutError());
    expect(r.error.key).toBe('NATS_UNAVAILABLE');
    expect(r.code).toBe(ERRORS.NATS_UNAVAILABLE.code);
  });

  it('still answers a plain failure as INTERNAL', async () => {
    expect((await answerTo(new Error('boom'))).error.key).toBe('INTERNAL');
  });

  it('answers a request taken without a reply later, with "taken" only (so nats-server forgets its subject), and one with NO_REPLY never', async () => {
    const server = await startNatsServer();
    const log = createLogger('service-test', 'silent');
    const nc = await connectNats({ NATS_URL: server.url }, log, 'service-test');
    try {
      const svc = await addService(nc, { name: 'probe', version: '0.0.1', description: 'probe' });
      const took: unknown[] = [];
      for (const [name, outcome] of [
        ['later', REPLY_TAKEN],
        ['never', NO_REPLY],
      ] as const)
        jsonEndpoint(
          svc,
          name,
          { subject: `probe.${name}` },
          (d) => d,
          async (req) => (took.push(req), outcome),
          log,
        );
      await nc.flush();
      const reply = await nc.request('probe.later', JSON.stringify({ n: 1 }), { timeout: 5000 });
      expect(reply.json()).toEqual({ ok: true, taken: true });
      // What a sender that does not pass "taken" over is sent: nothing (it times out, as before).
      await expect(nc.request('probe.never', JSON.stringify({ n: 2 }), { timeout: 500 })).rejects.toThrow();
      expect(took).toEqual([{ n: 1 }, { n: 2 }]);
    } finally {
      await nc.close();
      await server.stop();
    }
  });
});

describe('requestJson', () => {
  it('says a request its NATS user may not send is forbidden, not that nobody answers', async () => {
    const dir = await tempDir('service-perm');
    const conf = join(dir.path, 'nats.conf');
    // A user that may send to `open.>` only (and take its replies), as a deployment's part is.
    await writeFile(
      conf,
      'authorization { users = [ { user: limited, password: pw, permissions: { publish: { allow: ["open.>"] }, subscribe: { allow: ["_INBOX.>"] } } } ] }\n',
    );
    const server = await startNatsServer({ args: ['-c', conf] });
    const nc = await connectNats(
      { NATS_URL: server.url, NATS_USER: 'limited', NATS_PASS: 'pw' },
      createLogger('service-test', 'silent'),
      'service-test',
    );
    const ask = (subject: string) =>
      requestJson(nc, subject, {}, { timeoutMs: 2_000, unavailable: () => new ShroomsError('SCHEDULER_UNAVAILABLE', 'not running') });
    try {
      await expect(ask('closed.x')).rejects.toMatchObject({
        key: 'ACTION_FORBIDDEN',
        message: expect.stringMatching(/may not send requests to closed\.x/),
      });
      // Allowed, and nobody there: that one is the service's absence.
      await expect(ask('open.x')).rejects.toMatchObject({ key: 'SCHEDULER_UNAVAILABLE' });
    } finally {
      await nc.close();
      await server.stop();
      await dir.remove();
    }
  });
});
