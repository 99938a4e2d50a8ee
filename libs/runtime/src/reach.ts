/**
 * Why a server does not answer, in words a person can act on: a TCP connect to each address with a
 * short bound. Used for the line a service prints when its first connection takes too long (NATS)
 * or a peer it needs is away (the gateway).
 */
import { connect } from 'node:net';

/** `refused`, `no such host`, `no answer within N ms`, or `open` when something listens there. */
export function probeTcp(host: string, port: number, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const done = (why: string) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
    sock.once('connect', () => done('open'));
    sock.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ECONNREFUSED' ? 'connection refused' : err.code === 'ENOTFOUND' ? 'no such host' : (err.code ?? err.message)),
    );
  });
}

/** Host and port of a server URL as NATS_URL writes them (`nats://h:p`, `h:p`, `tls://…`; 4222 by default). */
export function hostPort(server: string, defaultPort = 4222): { host: string; port: number } {
  const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `nats://${server}`);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : defaultPort };
}
