/**
 * patches/fastify@5.12.8.patch: fastify loads `node:https` and `node:http2` when a server asks for
 * them, not when it loads — the gateway's plain HTTP/1 server no longer holds Node's TLS and HTTP/2
 * stacks (4–5 MB of a process on Node 22). A server made with `https` options still serves over TLS.
 */
import { createRequire } from 'node:module';
import { inChildNode, selfSignedCert, tempDir, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Serves one route (over TLS when KEY is set), asks it once, says what it answered and what was loaded. */
const CHILD = `
const fs = require('node:fs');
const fastify = require(process.env.FASTIFY);
const tls = process.env.KEY ? { key: fs.readFileSync(process.env.KEY), cert: fs.readFileSync(process.env.CERT) } : undefined;
const app = fastify(tls ? { https: tls } : {});
app.get('/', async () => 'hello');
app.listen({ host: '127.0.0.1', port: 0 }).then(async (address) => {
  const client = require(tls ? 'node:https' : 'node:http');
  const body = await new Promise((resolve, reject) =>
    client.get(address, tls ? { ca: tls.cert } : {}, (res) => { let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => resolve(b)); }).on('error', reject),
  );
  await app.close();
  console.log(JSON.stringify({ body, scheme: new URL(address).protocol, tls: loaded('tls'), http2: loaded('http2') }));
});
`;
const FASTIFY = createRequire(import.meta.url).resolve('fastify');

let dir: TempDir;
beforeAll(async () => {
  dir = await tempDir('fastify-patch');
});
afterAll(async () => {
  await dir?.remove();
});

describe('fastify as patched', () => {
  it('serves plain HTTP without loading TLS or HTTP/2', async () => {
    expect(await inChildNode(CHILD, { FASTIFY })).toEqual({ body: 'hello', scheme: 'http:', tls: false, http2: false });
  });

  it('still serves over TLS when asked to', async () => {
    const cert = await selfSignedCert(dir.path);
    const got = await inChildNode(CHILD, { FASTIFY, KEY: cert.keyFile, CERT: cert.certFile });
    expect(got).toEqual({ body: 'hello', scheme: 'https:', tls: true, http2: false });
  });
});
