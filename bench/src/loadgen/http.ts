/**
 * A lean JSON-RPC client over node:http with keep-alive sockets (one per concurrent request), so
 * connection set-up is not in the figures and the generator itself stays cheap.
 */
import http from 'node:http';

export interface HttpReply {
  status: number;
  body: string;
}

export class RpcClient {
  private agent: http.Agent;
  private url: URL;

  constructor(url: string, sockets: number) {
    this.url = new URL(url);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets, scheduling: 'lifo' });
  }

  private options(length: number, accept: string): http.RequestOptions {
    return {
      agent: this.agent,
      host: this.url.hostname,
      port: this.url.port,
      path: this.url.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': length, 'a2a-version': '1.0', accept },
    };
  }

  /** One request; resolves with the whole body. */
  call(body: string): Promise<HttpReply> {
    const buf = Buffer.from(body);
    return new Promise((resolve, reject) => {
      const req = http.request(this.options(buf.length, 'application/json'), (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(buf);
    });
  }

  /**
   * A streaming call: resolves when the stream ends, with when its first `data:` event arrived and
   * every event's data.
   */
  stream(body: string, t0: number): Promise<{ status: number; firstMs: number | null; events: string[]; bytes: number }> {
    const buf = Buffer.from(body);
    return new Promise((resolve, reject) => {
      const req = http.request(this.options(buf.length, 'text/event-stream'), (res) => {
        let firstMs: number | null = null;
        let pending = '';
        let bytes = 0;
        const events: string[] = [];
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          bytes += chunk.length;
          pending += chunk;
          for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
            const block = pending.slice(0, end);
            pending = pending.slice(end + 2);
            const data = block
              .split('\n')
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(5).trimStart())
              .join('\n');
            if (!data) continue;
            if (firstMs === null) firstMs = performance.now() - t0;
            events.push(data);
          }
        });
        res.on('end', () => {
          if (pending.trim() && firstMs === null && res.statusCode === 200) firstMs = performance.now() - t0;
          if (pending.trim()) events.push(pending.trim());
          resolve({ status: res.statusCode ?? 0, firstMs, events, bytes });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(buf);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
