/**
 * patches/@nats-io__transport-node@3.4.0.patch: the NATS transport loads `node:tls` when a connection
 * first needs it, not when it loads — a service on a plain connection (every one of ours on a
 * machine's nats-server or across the WireGuard mesh) no longer holds Node's TLS stack, 2–3 MB of
 * each process on Node 22 and 24 — and tells an encrypted socket by its `encrypted` flag instead of
 * `instanceof TLSSocket`. A connection to a server that requires TLS still upgrades and is encrypted.
 * Each case runs in a child process: which of Node's modules a process has loaded is its own.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startNatsServer, tempDir, type NatsServerHandle, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const transportEntry = createRequire(import.meta.url).resolve('@nats-io/transport-node');

/** The child: connects, round-trips a flush, says whether it is encrypted and whether tls was loaded before and after. */
const CHILD = `
const { connect } = require(process.env.TRANSPORT);
const loaded = () => process.moduleLoadList.includes('NativeModule tls');
const before = loaded();
const ca = process.env.CA ? require('node:fs').readFileSync(process.env.CA, 'utf8') : undefined;
connect({ servers: process.env.URL, ...(ca ? { tls: { ca } } : {}) }).then(async (nc) => {
  await nc.flush();
  const encrypted = nc.protocol.transport.isEncrypted();
  await nc.close();
  console.log(JSON.stringify({ before, encrypted, after: loaded() }));
});
`;

async function child(env: Record<string, string>): Promise<{ before: boolean; encrypted: boolean; after: boolean }> {
  const { stdout } = await run(process.execPath, ['-e', CHILD], {
    env: { ...process.env, TRANSPORT: transportEntry, ...env },
    timeout: 20_000,
  });
  return JSON.parse(stdout.trim()) as { before: boolean; encrypted: boolean; after: boolean };
}

let dir: TempDir;
let plain: NatsServerHandle;
let secure: NatsServerHandle;
let caFile: string;
beforeAll(async () => {
  dir = await tempDir('transport-patch');
  const key = join(dir.path, 'key.pem');
  caFile = join(dir.path, 'cert.pem');
  // A self-signed certificate for this machine's loopback names, the client's only CA.
  const subject = '-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost';
  await run('openssl', [...`req -x509 -newkey rsa:2048 -nodes -days 1 ${subject}`.split(' '), '-keyout', key, '-out', caFile]);
  const conf = join(dir.path, 'tls.conf');
  await writeFile(conf, `tls { cert_file: "${caFile}", key_file: "${key}" }\n`);
  [plain, secure] = await Promise.all([startNatsServer(), startNatsServer({ args: ['-c', conf] })]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), secure?.stop()]);
  await dir?.remove();
});

describe('transport-node as patched', () => {
  it('never loads node:tls for a plain connection', async () => {
    expect(await child({ URL: plain.url })).toEqual({ before: false, encrypted: false, after: false });
  });

  it('loads it when the server requires TLS, and the connection is encrypted', async () => {
    expect(await child({ URL: secure.url, CA: caFile })).toEqual({ before: false, encrypted: true, after: true });
  });
});
