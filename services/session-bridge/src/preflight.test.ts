import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { healthCheck } from './preflight.js';

let srv: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (srv ? srv.close(r) : r(undefined)));
  srv = undefined;
});

/** A real HTTP server answering every request with `status` (or never, when `status` is 0). */
async function serve(status: number): Promise<string> {
  srv = createServer((_req, res) => {
    if (status) res.writeHead(status).end('body');
  });
  await new Promise<void>((r) => srv!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}/healthz`;
}

describe("the bridge's check of the gateway", () => {
  it('is answered by a 2xx', async () => {
    expect(await healthCheck(await serve(200))).toBeUndefined();
  });

  it('says the status of any other answer', async () => {
    expect(await healthCheck(await serve(503))).toBe('HTTP 503');
  });

  it('says "connection refused" when nothing listens', async () => {
    const url = await serve(200);
    await new Promise((r) => srv!.close(r));
    srv = undefined;
    expect(await healthCheck(url)).toBe('connection refused');
  });

  it('gives up on a server that does not answer', async () => {
    const url = await serve(0);
    expect(await healthCheck(url, 200)).toBe('no answer within 200 ms');
    srv!.closeAllConnections();
  });
});
