import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import type { BaseConfig } from './config.js';
import { flushTelemetry } from './telemetry.js';

export type { NatsConnection };

/**
 * Connects with endless reconnects (a NATS node restart must not kill a service) and logs the
 * connection's life. Call `nc.drain()` on shutdown so in-flight replies still go out.
 */
export async function connectNats(
  config: Pick<BaseConfig, 'NATS_URL' | 'NATS_USER' | 'NATS_PASS' | 'NATS_TOKEN' | 'NATS_CREDS'>,
  log: Logger,
  name: string,
  extra: { inboxPrefix?: string } = {},
): Promise<NatsConnection> {
  const opts: Parameters<typeof connect>[0] = {
    servers: config.NATS_URL.split(',').map((s) => s.trim()),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
    pingInterval: 10_000,
    // Without this nats.js builds two errors with stack traces per request (a tenth of the CPU).
    noAsyncTraces: true,
    ...(extra.inboxPrefix ? { inboxPrefix: extra.inboxPrefix } : {}),
  };
  if (config.NATS_USER) Object.assign(opts, { user: config.NATS_USER, pass: config.NATS_PASS });
  if (config.NATS_TOKEN) Object.assign(opts, { token: config.NATS_TOKEN });
  if (config.NATS_CREDS) {
    const { credsAuthenticator } = await import('@nats-io/nats-core');
    const { readFile } = await import('node:fs/promises');
    Object.assign(opts, { authenticator: credsAuthenticator(await readFile(config.NATS_CREDS)) });
  }
  const nc = await connect(opts);
  log.info({ server: nc.getServer(), version: nc.info?.version }, 'nats connected');
  void (async function watchStatus() {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') log.warn({ status: s.type }, 'nats status');
    }
  })();
  return nc;
}

/** Runs `stop` once on SIGINT/SIGTERM, then exits. */
export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), 10_000);
    timer.unref();
    stop()
      .catch((err: unknown) => log.error({ err }, 'shutdown failed'))
      .then(() => flushTelemetry())
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', () => handler('SIGINT'));
  process.once('SIGTERM', () => handler('SIGTERM'));
}
