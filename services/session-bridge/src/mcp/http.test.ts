import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startMcpHttpServer, type McpHttpServer } from './http.js';

let srv: McpHttpServer | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

const init = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

describe('the MCP server over HTTP', () => {
  it('listens on loopback only', async () => {
    await expect(startMcpHttpServer({ host: '0.0.0.0' })).rejects.toThrow(/loopback only/);
  });

  it('answers at /mcp on 127.0.0.1 and gives its URL', async () => {
    srv = await startMcpHttpServer({ context: { machine: 'box', gatewayUrl: 'http://127.0.0.1:1' } });
    expect(srv.url).toBe(`http://127.0.0.1:${srv.port}/mcp`);
    const res = await fetch(srv.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(init),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/"name":"shrooms"/);
  });

  it('refuses a request whose Host is not loopback (DNS rebinding)', async () => {
    srv = await startMcpHttpServer({ context: { machine: 'box', gatewayUrl: 'http://127.0.0.1:1' } });
    // fetch drops a Host header; node:http sends what a rebinding page's browser would.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        srv!.url,
        {
          method: 'POST',
          headers: { host: 'evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(init));
    });
    expect(status).toBe(403);
  });

  it('is stateless: GET is 405 and other paths 404', async () => {
    srv = await startMcpHttpServer({ context: { machine: 'box', gatewayUrl: 'http://127.0.0.1:1' } });
    expect((await fetch(srv.url)).status).toBe(405);
    expect((await fetch(srv.url.replace('/mcp', '/other'), { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('answers a body past its limit with 413 naming the limit, to a client that sends it all first', async () => {
    srv = await startMcpHttpServer({ context: { machine: 'box', gatewayUrl: 'http://127.0.0.1:1' } });
    const big = JSON.stringify({ ...init, params: { ...init.params, pad: 'x'.repeat(2 * 1024 * 1024) } });
    for (const chunked of [false, true]) {
      const res = await fetch(srv.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        // A stream has no Content-Length: the limit must hold while it comes.
        body: chunked ? new Blob([big]).stream() : big,
        ...(chunked ? { duplex: 'half' } : {}),
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ error: { message: 'request body is larger than 1048576 bytes' } });
    }
  });

  it('answers the 413 to a slower client that writes its whole body first, also when it asks to close', async () => {
    srv = await startMcpHttpServer({ context: { machine: 'box', gatewayUrl: 'http://127.0.0.1:1' } });
    // 2 MiB written 64 KiB every 5 ms before the answer is read. Asked to close, the connection
    // was closed once the answer was written, with the rest still coming, and the reset lost the
    // answer (EPIPE); now the rest is read and dropped, then the connection closed as asked.
    const answers = await Promise.all([false, true].map((close) => postSlowly(srv!.port, 2 * 1024 * 1024, close)));
    expect(answers).toEqual(['HTTP/1.1 413 Payload Too Large', 'HTTP/1.1 413 Payload Too Large']);
  });
});

/** The status line of the answer to a POST of `bytes` written before reading, or how it failed. */
function postSlowly(port: number, bytes: number, close: boolean): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: '127.0.0.1' });
    let answer = '';
    let error = '';
    sock.pause();
    sock.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    sock.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    // Kept alive, the server does not close: the answer is complete once its body is in.
    const done = () => resolve(answer.split('\r\n')[0] || `no answer (${error})`);
    sock.on('close', done);
    sock.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${close ? 'Connection: close\r\n' : ''}Content-Length: ${bytes}\r\n\r\n`,
    );
    const piece = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    const more = (): void => {
      if (sock.destroyed) return;
      if (sent >= bytes) {
        sock.resume();
        if (!close) sock.once('data', () => setImmediate(() => sock.end()));
        return;
      }
      sent += piece.length;
      sock.write(piece);
      setTimeout(more, 5);
    };
    more();
  });
}
