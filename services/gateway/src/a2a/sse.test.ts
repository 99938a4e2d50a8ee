/**
 * SseStreams on a real HTTP server (fastify) and a real client socket that stops reading: the
 * gateway stops taking the task's changes once its client leaves LIMIT_SSE_BUFFER_BYTES unread,
 * ends the stream with LIMIT_EXCEEDED, frees its place, and cuts the client off a heartbeat later.
 * The task's stream here is a generator of big status updates (what a chatty task's progress
 * notes are); everything else is the gateway's own code.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ShroomsError, StreamResponse } from '@shrooms/protocol';
import { afterEach, expect, it } from 'vitest';
import { SseStreams } from './sse.js';
import type { TaskStream } from './stream.js';

/** Events the task has, each this big: far more than a paused client's socket buffers hold. */
const EVENTS = 400;
const EVENT_BYTES = 64 * 1024;
const LIMIT = 256 * 1024;

let app: FastifyInstance | undefined;
let client: Socket | undefined;
afterEach(async () => {
  client?.destroy();
  await app?.close();
});

/**
 * A task that changes EVENTS times, one change per turn of the event loop (as changes come, each in
 * a NATS message of its own), as fast as it is read; counts what was taken.
 */
function chattyTask() {
  const seen = { taken: 0, closed: false };
  const note = 'x'.repeat(EVENT_BYTES);
  async function* events(): AsyncGenerator<StreamResponse> {
    for (let i = 0; i < EVENTS && !seen.closed; i++) {
      await new Promise((r) => setImmediate(r));
      seen.taken++;
      yield {
        statusUpdate: {
          taskId: 'demo:t-1',
          contextId: 'c-1',
          status: { state: 'TASK_STATE_WORKING', message: { messageId: `n-${i}`, role: 'ROLE_AGENT', parts: [{ text: note }] } },
        },
      } as StreamResponse;
    }
  }
  const stream: TaskStream = { events: events(), close: () => (seen.closed = true) };
  return { stream, seen };
}

async function serve(sse: SseStreams, stream: TaskStream) {
  const piped: { done?: Promise<void>; errors: ShroomsError[] } = { errors: [] };
  app = Fastify();
  app.get('/stream', (req, reply) => {
    piped.done = sse.pipe(
      req,
      reply,
      'laptop',
      stream,
      (e) => e,
      (se) => (piped.errors.push(se), { error: se.key }),
    );
    return reply;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  client = connect(port, '127.0.0.1');
  await once(client, 'connect');
  client.write('GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return piped;
}

it('ends the stream of a client that stops reading, frees its place, and cuts it off a heartbeat later', async () => {
  const sse = new SseStreams({ max: 1, maxPerDevice: 1, heartbeatMs: 300, maxBufferedBytes: LIMIT });
  const { stream, seen } = chattyTask();
  const piped = await serve(sse, stream);
  client!.pause(); // reads nothing: the kernel's buffers fill, then the gateway's
  await expect.poll(() => piped.done !== undefined, { timeout: 10_000 }).toBe(true);
  await piped.done;
  // Stopped taking the task's changes well before the last (26 MB of them), and said why.
  expect(seen.taken).toBeLessThan(EVENTS);
  expect(seen.closed).toBe(true);
  expect(piped.errors.map((e) => [e.key, e.details.limit, e.details.setting])).toEqual([
    ['LIMIT_EXCEEDED', 'sseBufferBytes', 'LIMIT_SSE_BUFFER_BYTES'],
  ]);
  expect(sse.active).toBe(0);
  // Still not reading: the connection is cut a heartbeat later, and its buffer with it.
  const connections = () =>
    new Promise<number>((resolve, reject) => app!.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  await expect.poll(connections, { timeout: 10_000 }).toBe(0);
});

it('sends every change to a client that reads along', async () => {
  const sse = new SseStreams({ max: 1, maxPerDevice: 1, heartbeatMs: 300, maxBufferedBytes: LIMIT });
  const { stream, seen } = chattyTask();
  const piped = await serve(sse, stream);
  let bytes = 0;
  let tail = '';
  client!.on('data', (b: Buffer) => {
    bytes += b.length;
    tail = (tail + b.toString('latin1')).slice(-16);
  });
  await expect.poll(() => piped.done !== undefined, { timeout: 10_000 }).toBe(true);
  await piped.done;
  expect(seen.taken).toBe(EVENTS);
  expect(piped.errors).toEqual([]);
  // The response's last chunk (SSE asks to keep the connection): every event arrived before it.
  await expect.poll(() => tail.endsWith('\r\n0\r\n\r\n'), { timeout: 10_000 }).toBe(true);
  expect(bytes).toBeGreaterThan(EVENTS * EVENT_BYTES);
});
