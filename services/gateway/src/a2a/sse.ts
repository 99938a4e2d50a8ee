/**
 * Writes a stream as Server-Sent Events on a raw response: heartbeats (`: ping`) so proxies keep
 * idle streams, cleanup when the client goes away, a cap on streams open at once — on the
 * gateway's, and on each device's share of them, so one device cannot hold them all — and on what
 * one stream's client leaves unread (`maxBufferedBytes`): past it the stream ends with
 * LIMIT_EXCEEDED `sseBufferBytes` (SubscribeToTask gives the task as it stands), and a client that
 * does not read even that is cut off a heartbeat later, so the gateway never buffers a task's
 * changes for a client that does not take them. The first
 * event is awaited before headers go out, so an early error is still a plain JSON error; a later
 * one — the gateway losing NATS above all, when heartbeats alone would keep a client waiting on a
 * stream that can bring nothing more — ends the stream with an error event the client can retry on.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ShroomsError, type StreamResponse } from '@shrooms/protocol';
import type { NatsLink } from '@shrooms/runtime';
import { clientGone } from './caller.js';
import { DeviceShares } from '../tasks/shares.js';
import { asShroomsError } from './jsonrpc.js';
import type { TaskStream } from './stream.js';

export interface SseLimits {
  /** Streams open at once on the gateway. */
  max: number;
  /** Streams one device may hold open at once. */
  maxPerDevice: number;
  heartbeatMs: number;
  /** Bytes one stream's client may leave unread before the stream ends. */
  maxBufferedBytes: number;
}

export class SseStreams {
  active = 0;
  private readonly shares: DeviceShares;
  constructor(
    readonly limits: SseLimits,
    /** The gateway's NATS connection: open streams end with NATS_UNAVAILABLE when it is lost. */
    private readonly link?: Pick<NatsLink, 'onOutage'>,
  ) {
    this.shares = new DeviceShares(limits.maxPerDevice, { limit: 'sseStreamsPerDevice', what: 'streams' });
  }

  /** Takes a place for `device`'s stream, or throws LIMIT_EXCEEDED naming the cap it met; returns its release. */
  private take(device: string): () => void {
    const { max } = this.limits;
    if (this.active >= max)
      throw new ShroomsError('LIMIT_EXCEEDED', `${max} streams are already open on this gateway; retry later`, {
        limit: 'sseStreams',
        max,
      });
    const release = this.shares.take(device);
    this.active++;
    return () => {
      this.active--;
      release();
    };
  }

  /**
   * Sends `stream` to `device` (the caller); `frame` wraps each event (JSON-RPC envelope or bare),
   * `frameError` the error that ends a stream once it has begun. Throws without writing when the
   * first event fails (the caller answers with an error instead).
   */
  async pipe(
    req: FastifyRequest,
    reply: FastifyReply,
    device: string,
    stream: TaskStream,
    frame: (e: StreamResponse) => unknown,
    frameError: (se: ShroomsError) => unknown,
  ): Promise<void> {
    // The cap is taken before the first event, so a refused SendStreamingMessage creates no task.
    let release: () => void;
    try {
      release = this.take(device);
    } catch (err) {
      stream.close();
      throw err;
    }
    const it = stream.events[Symbol.asyncIterator]();
    let first: IteratorResult<StreamResponse>;
    try {
      first = await it.next();
    } catch (err) {
      release();
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
    const write = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const { heartbeatMs, maxBufferedBytes } = this.limits;
    const ping = setInterval(() => res.write(': ping\n\n'), heartbeatMs);
    let ended: ShroomsError | undefined;
    let notReading = false;
    const unfollow = this.link?.onOutage((err) => {
      ended ??= err;
      stream.close();
    });
    const onGone = () => stream.close();
    res.once('close', onGone);
    // Said at once for a client that left while the first event was awaited (its 'close' came first).
    const unfollowSocket = clientGone(req)(onGone);
    try {
      if (!first.done) write(frame(first.value));
      for (let n = await it.next(); !n.done; n = await it.next()) {
        if (res.destroyed) break;
        if (res.writableLength > maxBufferedBytes) {
          ended = unread(maxBufferedBytes);
          notReading = true;
          break;
        }
        write(frame(n.value));
      }
    } catch (err) {
      const se = (ended ??= asShroomsError(err));
      if (se.key === 'INTERNAL') req.log.error({ err }, 'internal error in a stream');
    } finally {
      unfollow?.();
      if (ended && !res.destroyed) write(frameError(ended));
      clearInterval(ping);
      release();
      stream.close();
      unfollowSocket();
      if (!res.destroyed) res.end();
      // A client that stopped reading is given a heartbeat to take what is buffered, then cut off.
      if (notReading && !res.writableFinished) {
        const cut = setTimeout(() => res.destroy(), heartbeatMs);
        res.once('close', () => clearTimeout(cut));
      }
    }
  }
}

function unread(max: number): ShroomsError {
  return new ShroomsError(
    'LIMIT_EXCEEDED',
    `this stream's client left more than ${max} bytes unread; the stream ended (SubscribeToTask gives the task as it stands)`,
    { limit: 'sseBufferBytes', max },
  );
}
