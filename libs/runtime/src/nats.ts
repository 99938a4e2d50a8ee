import { connect } from '@nats-io/transport-node';
import { errors, type NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import type { BaseConfig } from './config.js';
import { redactUrls } from './config.js';
import { hostPort, probeTcp } from './reach.js';
import { flushTelemetry } from './telemetry.js';

export type { NatsConnection };

/** How long a first connection may take before the line that says why, then how often it is said again, ms. */
export const NATS_FIRST_CONNECT_WARN_MS = 3_000;
export const NATS_FIRST_CONNECT_REPEAT_MS = 30_000;

/**
 * Connects with endless reconnects (a NATS node restart must not kill a service) and logs the
 * connection's life. Until the first connection is made it says, after 3 s and then every 30 s,
 * why not and what to do (a service keeps trying: it may start before NATS). A login NATS refuses
 * fails at once. Call `nc.drain()` on shutdown so in-flight replies still go out.
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
  const servers = opts.servers as string[];
  let timer: NodeJS.Timeout | undefined;
  const explain = async () => {
    const why = await Promise.all(servers.map(async (s) => `${redactUrls(s)} (${await whyNot(s)})`));
    log.error(
      { servers: servers.map(redactUrls) },
      `cannot reach NATS at ${why.join(', ')}; still trying. Start the mesh (\`shrooms-agent up\`) or set NATS_URL to a running server`,
    );
    timer = setTimeout(() => void explain(), NATS_FIRST_CONNECT_REPEAT_MS);
  };
  timer = setTimeout(() => void explain(), NATS_FIRST_CONNECT_WARN_MS);
  let nc: NatsConnection;
  try {
    nc = await connect(opts);
  } catch (err) {
    if (err instanceof errors.AuthorizationError)
      throw new Error(
        `NATS at ${servers.map(redactUrls).join(', ')} refused the login${config.NATS_USER ? ` of user ${config.NATS_USER}` : ' (none given)'}: check NATS_USER/NATS_PASS (or NATS_CREDS)`,
        { cause: err },
      );
    throw err;
  } finally {
    clearTimeout(timer);
  }
  log.info({ server: nc.getServer(), version: nc.info?.version }, 'nats connected');
  void (async function watchStatus() {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') log.warn({ status: s.type }, 'nats status');
    }
  })();
  return nc;
}

/** Why one server does not take a connection: refused, no such host, silence, or not a login. */
async function whyNot(server: string): Promise<string> {
  const { host, port } = hostPort(server);
  const tcp = await probeTcp(host, port);
  return tcp === 'open' ? 'the port answers, but not as a NATS server that lets us in' : tcp;
}

/**
 * Drains `nc` on shutdown, so in-flight replies still go out. With NATS already gone there is
 * nothing to flush them to: the drain fails at once, and the connection is closed instead — a
 * stop, not a failed shutdown.
 */
export async function drainNats(nc: NatsConnection, log: Logger): Promise<void> {
  try {
    await nc.drain();
  } catch (err) {
    log.info({ reason: (err as Error).message }, 'NATS not reachable at shutdown: connection closed without draining');
    await nc.close().catch(() => {});
  }
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
