/**
 * The dashboard's live feed to browsers: Server-Sent Events on `/dashboard/events`. Bounded three
 * ways: at most `max` streams at once (more get 503), a heartbeat (`: ping`) keeps proxies from
 * cutting idle streams, and a browser that stops reading is dropped once `maxBufferedBytes` wait
 * for it (EventSource reconnects by itself and the page reloads what it shows on `hello`). Every
 * timer and listener is released when the browser goes away.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DashboardEvents } from './wire.js';
import { clientGone } from '../a2a/caller.js';

export interface StreamLimits {
  max: number;
  heartbeatMs: number;
  maxBufferedBytes: number;
}

interface Client {
  write(chunk: string): void;
  close(): void;
}

export class DashboardStreams {
  private clients = new Set<Client>();

  constructor(readonly limits: StreamLimits) {}

  get size(): number {
    return this.clients.size;
  }

  get full(): boolean {
    return this.clients.size >= this.limits.max;
  }

  /** Opens a stream; `first` is written at once (the `hello` event). Resolves when it closes. */
  open(req: FastifyRequest, reply: FastifyReply, first: string, onClose: () => void): void {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    });
    let closed = false;
    let unfollowSocket = () => {};
    const client: Client = {
      write: (chunk) => {
        if (closed) return;
        if (res.destroyed || res.writableLength > this.limits.maxBufferedBytes) {
          client.close(); // a browser gone, or one that does not read, is dropped, not buffered for
          return;
        }
        res.write(chunk);
      },
      close: () => {
        if (closed) return;
        closed = true;
        clearInterval(ping);
        this.clients.delete(client);
        unfollowSocket();
        res.off('close', client.close);
        if (!res.destroyed) res.end();
        onClose();
      },
    };
    const ping = setInterval(() => client.write(': ping\n\n'), this.limits.heartbeatMs);
    this.clients.add(client);
    res.once('close', client.close);
    // Said at once for a browser that left while the feed was starting (its 'close' came first):
    // its stream would hold a place, and keep the feed from stopping when idle, for good.
    unfollowSocket = clientGone(req)(client.close);
    if (closed) return;
    res.write('retry: 2000\n\n');
    client.write(first);
  }

  /** Sends an event to every page (typed as the page reads it: wire.ts). */
  broadcast<E extends keyof DashboardEvents>(event: E, data: DashboardEvents[E]): void {
    if (this.clients.size === 0) return;
    const chunk = frame(event, data);
    for (const c of [...this.clients]) c.write(chunk);
  }

  closeAll(): void {
    for (const c of [...this.clients]) c.close();
  }
}

export function frame<E extends keyof DashboardEvents>(event: E, data: DashboardEvents[E]): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
