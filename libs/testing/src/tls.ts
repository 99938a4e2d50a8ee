/**
 * What tests of TLS paths need: a self-signed certificate for this machine's loopback names (made by
 * `openssl`, which `./shrooms test` installs when missing), and which of Node's modules a child
 * process has loaded — a process's module list is its own, so each case runs in a child.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SelfSigned {
  keyFile: string;
  /** The certificate, also the only CA a client needs to trust it. */
  certFile: string;
}

/** A key and a self-signed certificate for 127.0.0.1 and localhost, valid a day, written into `dir`. */
export async function selfSignedCert(dir: string): Promise<SelfSigned> {
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  const subject = '-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost';
  await run('openssl', [...`req -x509 -newkey rsa:2048 -nodes -days 1 ${subject}`.split(' '), '-keyout', keyFile, '-out', certFile]);
  return { keyFile, certFile };
}

/**
 * Runs `script` (CommonJS) in a child Node with `env`, where `loaded(name)` says whether Node's module
 * `name` is loaded; returns the JSON the script prints as its last line.
 */
export async function inChildNode<T>(script: string, env: Record<string, string> = {}): Promise<T> {
  const prelude = "const loaded = (name) => process.moduleLoadList.includes('NativeModule ' + name);\n";
  const { stdout } = await run(process.execPath, ['-e', prelude + script], { env: { ...process.env, ...env }, timeout: 20_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
}
