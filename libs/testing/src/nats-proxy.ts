/**
 * A TCP proxy between one client and a nats-server that can lose one message on its way to the
 * client: what a lost acknowledgement looks like to that client (the server stored the write, the
 * client never hears so and times out). It reads the server's side of the protocol (`MSG`, `HMSG`
 * and their payloads; every other line passes as it is) and forwards all of it, byte for byte, but
 * the one message it was told to drop. No TLS.
 */
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';

export interface NatsProxy {
  /** `nats://127.0.0.1:PORT`, for the client to connect to. */
  readonly url: string;
  /** Drops the next message to the client whose payload `matches`; resolves once one was dropped. */
  dropNext(matches: (payload: string) => boolean): Promise<void>;
  close(): Promise<void>;
}

const CRLF = Buffer.from('\r\n');

/** Splits the server's bytes into whole protocol units (a line, or a message with its payload). */
class Frames {
  private buf = Buffer.alloc(0);

  /** The complete units in `chunk` and what came before it; a partial one waits for more. */
  push(chunk: Buffer): { head: string; bytes: Buffer; payload?: string }[] {
    this.buf = Buffer.concat([this.buf, chunk]);
    const out: { head: string; bytes: Buffer; payload?: string }[] = [];
    for (;;) {
      const eol = this.buf.indexOf(CRLF);
      if (eol < 0) return out;
      const head = this.buf.subarray(0, eol).toString('latin1');
      // MSG <subject> <sid> [reply] <#bytes>; HMSG <subject> <sid> [reply] <#header bytes> <#total bytes>
      const size = /^H?MSG /i.test(head) ? Number(head.trim().split(/\s+/).at(-1)) : -1;
      const end = size < 0 ? eol + 2 : eol + 2 + size + 2;
      if (this.buf.length < end) return out;
      const bytes = this.buf.subarray(0, end);
      out.push(size < 0 ? { head, bytes } : { head, bytes, payload: bytes.subarray(eol + 2, end - 2).toString('utf8') });
      this.buf = this.buf.subarray(end);
    }
  }
}

/** Starts a proxy on 127.0.0.1 to the nats-server at `target` (`nats://host:port`). */
export async function startNatsProxy(target: string): Promise<NatsProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let drop: { matches: (payload: string) => boolean; done: () => void } | undefined;

  const server: Server = createServer((client) => {
    const upstream = tcpConnect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const frames = new Frames();
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      for (const f of frames.push(chunk)) {
        if (f.payload !== undefined && drop?.matches(f.payload)) {
          const done = drop.done;
          drop = undefined;
          done();
          continue;
        }
        client.write(f.bytes);
      }
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as { port: number };

  return {
    url: `nats://127.0.0.1:${own}`,
    dropNext(matches) {
      return new Promise((resolve) => (drop = { matches, done: resolve }));
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
