/**
 * Writes a stream as Server-Sent Events on a raw response: heartbeats (`: ping`) so proxies keep
 * idle streams, cleanup when the client goes away, and a cap on streams open at once. The first
 * event is awaited before headers go out, so an early error is still a plain JSON error.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ShroomsError, type StreamResponse } from '@shrooms/protocol';
import type { TaskStream } from './stream.js';

export class SseStreams {
  active = 0;
  constructor(
    readonly max: number,
    readonly heartbeatMs: number,
  ) {}

  /**
   * Sends `stream` to the client; `frame` wraps each event (JSON-RPC envelope or bare). Returns
   * false without writing when the first event fails (the caller answers with an error instead).
   */
  async pipe(req: FastifyRequest, reply: FastifyReply, stream: TaskStream, frame: (e: StreamResponse) => unknown): Promise<void> {
    // The cap is taken before the first event, so a refused SendStreamingMessage creates no task.
    if (this.active >= this.max) {
      stream.close();
      throw new ShroomsError('LIMIT_EXCEEDED', `${this.max} streams are already open on this gateway; retry later`, {
        limit: 'sseStreams',
        max: this.max,
      });
    }
    this.active++;
    const it = stream.events[Symbol.asyncIterator]();
    let first: IteratorResult<StreamResponse>;
    try {
      first = await it.next();
    } catch (err) {
      this.active--;
      stream.close();
      throw err;
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const write = (e: StreamResponse) => res.write(`data: ${JSON.stringify(frame(e))}\n\n`);
    const ping = setInterval(() => res.write(': ping\n\n'), this.heartbeatMs);
    const onGone = () => stream.close();
    req.raw.socket.once('close', onGone);
    res.once('close', onGone);
    // A client that left while the first event was awaited fired 'close' before we listened.
    if (res.destroyed || req.raw.socket.destroyed) stream.close();
    try {
      if (!first.done) write(first.value);
      for (let n = await it.next(); !n.done; n = await it.next()) {
        if (res.destroyed) break;
        write(n.value);
      }
    } finally {
      clearInterval(ping);
      this.active--;
      stream.close();
      req.raw.socket.off('close', onGone);
      if (!res.destroyed) res.end();
    }
  }
}
