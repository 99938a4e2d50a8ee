import { existsSync } from 'node:fs';

/** The nats-server a unit runs: NATS_SERVER_BIN, else Debian's /usr/sbin or another usual place. */
export function natsServerPath(): string {
  if (process.env.NATS_SERVER_BIN) return process.env.NATS_SERVER_BIN;
  for (const p of ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server']) if (existsSync(p)) return p;
  return 'nats-server';
}
