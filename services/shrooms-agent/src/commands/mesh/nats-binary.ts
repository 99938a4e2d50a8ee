import { existsSync } from 'node:fs';
import { cliEnv } from '../../config.js';

/** The nats-server a unit runs: NATS_SERVER_BIN, else Debian's /usr/sbin or another usual place. */
export function natsServerPath(): string {
  const { NATS_SERVER_BIN } = cliEnv();
  if (NATS_SERVER_BIN) return NATS_SERVER_BIN;
  for (const p of ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server']) if (existsSync(p)) return p;
  return 'nats-server';
}
