/**
 * patches/@nats-io__transport-node@3.4.0.patch: the NATS transport loads `node:tls` when a connection
 * first needs it, not when it loads — a service on a plain connection (every one of ours on a
 * machine's nats-server or across the WireGuard mesh) no longer holds Node's TLS stack, 2–3 MB of
 * each process on Node 22 and 24 — and tells an encrypted socket by its `encrypted` flag instead of
 * `instanceof TLSSocket`. A connection to a server that requires TLS still upgrades and is encrypted.
 */
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { inChildNode, selfSignedCert, startNatsServer, tempDir, type NatsServerHandle, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Connects, flushes, says whether it is encrypted and whether tls was loaded before and after. */
const CHILD = `
const { connect } = require(process.env.TRANSPORT);
const before = loaded('tls');
const ca = process.env.CA ? require('node:fs').readFileSync(process.env.CA, 'utf8') : undefined;
connect({ servers: process.env.URL, ...(ca ? { tls: { ca } } : {}) }).then(async (nc) => {
  await nc.flush();
  const encrypted = nc.protocol.transport.isEncrypted();
  await nc.close();
  console.log(JSON.stringify({ before, encrypted, after: loaded('tls') }));
});
`;
const TRANSPORT = createRequire(import.meta.url).resolve('@nats-io/transport-node');

let dir: TempDir;
let plain: NatsServerHandle;
let secure: NatsServerHandle;
let ca: string;
beforeAll(async () => {
  dir = await tempDir('transport-patch');
  const cert = await selfSignedCert(dir.path);
  ca = cert.certFile;
  const conf = join(dir.path, 'tls.conf');
  await writeFile(conf, `tls { cert_file: "${cert.certFile}", key_file: "${cert.keyFile}" }\n`);
  [plain, secure] = await Promise.all([startNatsServer(), startNatsServer({ args: ['-c', conf] })]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), secure?.stop()]);
  await dir?.remove();
});

describe('transport-node as patched', () => {
  it('never loads node:tls for a plain connection', async () => {
    expect(await inChildNode(CHILD, { TRANSPORT, URL: plain.url })).toEqual({ before: false, encrypted: false, after: false });
  });

  it('loads it when the server requires TLS, and the connection is encrypted', async () => {
    expect(await inChildNode(CHILD, { TRANSPORT, URL: secure.url, CA: ca })).toEqual({ before: false, encrypted: true, after: true });
  });
});
