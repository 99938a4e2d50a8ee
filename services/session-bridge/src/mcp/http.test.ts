import { request } from 'node:http';
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
});
