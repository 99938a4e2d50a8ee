/**
 * patches/@nats-io__nats-core@3.4.0.patch: a request that got its reply no longer builds a
 * "cancelled" RequestError (with its stack trace) on its way out of the mux — nats.js 3.4.0 made one
 * per successful request and threw it away on the settled promise, 3–6 % of each service's CPU.
 * Failures still reject as before. And what is published is written to the socket once per turn of
 * the event loop (nats.js wrote once per microtask): a socket write is the costliest thing each
 * service does per task (a quarter of the bridge's CPU in the profile), and the writes that answer
 * one read of the socket resume on separate chains of promises. close() still sends what was
 * published before it. Real nats-server, a connection made as every service makes it
 * (`connectNats`: `noAsyncTraces`, so no error is built up front either); the count is taken on
 * nats.js's own error module (the one its request code reads the class from).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { errors, type NatsConnection } from '@nats-io/nats-core';
import { eventually, startNatsServer, type NatsServerHandle } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from './log.js';
import { connectNats } from './nats.js';

const require = createRequire(import.meta.url);
const errorsModule = require(join(dirname(require.resolve('@nats-io/nats-core')), 'errors.js')) as {
  RequestError: typeof errors.RequestError;
};

let nats: NatsServerHandle;
let nc: NatsConnection;
let made = 0;
const original = errorsModule.RequestError;
beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connectNats({ NATS_URL: nats.url }, createLogger('patch-test', 'silent'), 'patch-test');
  nc.subscribe('patch.echo', { callback: (_err, msg) => void msg.respond(msg.data) });
  errorsModule.RequestError = class extends original {
    constructor(...args: ConstructorParameters<typeof original>) {
      super(...args);
      made++;
    }
  };
});
afterAll(async () => {
  errorsModule.RequestError = original;
  await nc?.close();
  await nats?.stop();
});

describe('nats-core as patched', () => {
  it('builds no RequestError for requests that got their reply', async () => {
    made = 0;
    for (let i = 0; i < 50; i++) expect(new TextDecoder().decode((await nc.request('patch.echo', `m${i}`)).data)).toBe(`m${i}`);
    expect(made).toBe(0);
  });

  it('writes what separate chains of promises publish in one turn as one socket write, in order', async () => {
    const other = await connectNats({ NATS_URL: nats.url }, createLogger('patch-test', 'silent'), 'patch-test-other');
    const got: string[] = [];
    other.subscribe('patch.turn', { callback: (_err, msg) => void got.push(msg.string()) });
    await other.flush();
    const transport = (nc as unknown as { protocol: { transport: { send: (b: Uint8Array) => void } } }).protocol.transport;
    const send = transport.send.bind(transport);
    let writes = 0;
    transport.send = (b) => {
      writes++;
      send(b);
    };
    try {
      // Five publishes, each at the end of a chain of promises of its own length, as acks and
      // watch entries of one read resume.
      const chain = (depth: number): Promise<void> => (depth === 0 ? Promise.resolve() : Promise.resolve().then(() => chain(depth - 1)));
      await Promise.all([0, 3, 6, 9, 12].map((depth, i) => chain(depth).then(() => nc.publish('patch.turn', `m${i}`))));
      await new Promise((r) => setImmediate(r));
      expect(writes).toBe(1);
    } finally {
      transport.send = send;
    }
    await eventually(() => expect(got).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']));
    await other.close();
  });

  it('still sends what was published right before close()', async () => {
    const other = await connectNats({ NATS_URL: nats.url }, createLogger('patch-test', 'silent'), 'patch-test-other');
    const got: string[] = [];
    other.subscribe('patch.last', { callback: (_err, msg) => void got.push(msg.string()) });
    await other.flush();
    const closing = await connectNats({ NATS_URL: nats.url }, createLogger('patch-test', 'silent'), 'patch-test-closing');
    closing.publish('patch.last', 'last words');
    await closing.close();
    await eventually(() => expect(got).toEqual(['last words']));
    await other.close();
  });

  it('still rejects a request nobody answers, and one that times out', async () => {
    await expect(nc.request('patch.nobody', 'x')).rejects.toThrow(/no responders/i);
    nc.subscribe('patch.silent', { callback: () => {} });
    await expect(nc.request('patch.silent', 'x', { timeout: 100 })).rejects.toBeInstanceOf(errors.TimeoutError);
  });
});
