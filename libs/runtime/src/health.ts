/**
 * A tiny HTTP health server for services that have no HTTP server of their own (guard, scheduler,
 * bridge), so container probes and `curl` can ask them:
 *
 *   GET /healthz  liveness: the process answers and its `live` checks pass (default: none). Keep it
 *                 free of NATS round trips, or a NATS outage restarts every pod at once.
 *   GET /readyz   readiness: every check passes. 200 `{status:"ok",checks}`, else 503
 *                 `{status:"unavailable",checks,errors}`.
 *
 * Checks run concurrently, each bounded by `timeoutMs`; a result is reused for `cacheMs`, and
 * concurrent probes share one evaluation, so a probe storm costs one round of checks.
 *
 * The ledger-writable check (`natsHealthChecks` with a KV) puts one small value under
 * `_health.MACHINE.NAME` in the bucket. `encodeToken` never produces a token starting with
 * `_health` (an `_` is always followed by two upper-case hex digits), so the key can never be a task
 * (`M.S.K`) and no task filter (`M.S.>`, `M.>`) ever matches it; history 1 keeps one message per
 * key, so the space stays bounded by the number of machines × services.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { encodeToken } from '@shrooms/protocol';
import type { Logger } from 'pino';
import { z } from 'zod';

/** A check passes when it returns (or resolves to) true; false, a throw or a timeout fail it. */
export type HealthCheck = () => boolean | Promise<boolean>;
export type HealthChecks = Record<string, HealthCheck>;

export interface HealthReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, boolean>;
  errors?: Record<string, string>;
}

/**
 * `HEALTH_PORT` unset or empty: no health server. `0`: any free port (tests). `HEALTH_HOST`:
 * 127.0.0.1 by default; `0.0.0.0` inside a pod so the kubelet can reach it.
 */
export const HealthConfigSchema = z.object({
  HEALTH_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).max(65535).optional()),
  HEALTH_HOST: z.string().default('127.0.0.1'),
});
export type HealthConfig = z.infer<typeof HealthConfigSchema>;

export interface HealthServerOptions {
  host?: string;
  /** Undefined: start nothing and resolve undefined (the service runs without a health server). */
  port?: number;
  /** Readiness checks (`/readyz`). */
  checks: HealthChecks;
  /** Liveness checks (`/healthz`). Default none: the process answering is alive. */
  live?: HealthChecks;
  /** Per check, ms. Default 2 000. */
  timeoutMs?: number;
  /** How long one evaluation is reused, ms. Default 1 000. */
  cacheMs?: number;
  log?: Logger;
}

export interface HealthServer {
  url: string;
  port: number;
  /** Runs the readiness checks now (cached like a probe). */
  ready(): Promise<HealthReport>;
  close(): Promise<void>;
}

/** Starts the server when `port` is given; resolves undefined otherwise. */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer | undefined> {
  if (opts.port === undefined) return undefined;
  const { host = '127.0.0.1', timeoutMs = 2_000, cacheMs = 1_000, log } = opts;
  const ready = cached(() => evaluate(opts.checks, timeoutMs), cacheMs);
  const live = cached(() => evaluate(opts.live ?? {}, timeoutMs), cacheMs);

  const server: Server = createServer(function serveHealth(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? '/').split('?')[0];
    const probe = path === '/readyz' ? ready : path === '/healthz' ? live : undefined;
    if (!probe) return send(res, 404, { error: 'not found; try /healthz or /readyz' });
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'GET only' });
    probe().then(
      (report) => {
        if (report.status !== 'ok') log?.warn({ path, ...report }, 'health check failing');
        send(res, report.status === 'ok' ? 200 : 503, report);
      },
      (err: unknown) => send(res, 500, { status: 'unavailable', error: String(err) }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log?.info({ url }, 'health server listening');
  return {
    url,
    port,
    ready,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface NatsHealthOptions {
  nc: NatsConnection;
  /** A bucket this service writes (the ledger for gateway and bridge); adds a write check. */
  kv?: KV;
  /** Where the write check puts its value: `healthKey(machine, name)`. */
  key?: string;
  /** Name of the write check in reports. Default `ledger`. */
  name?: string;
}

/**
 * Readiness of a NATS service: `nats` (a PING round trip on the live connection; fails while
 * reconnecting), `jetstream` (the JetStream API answers `$JS.API.INFO`, which every KV user needs
 * anyway) and, given `kv` and `key`, a real put that only succeeds once the bucket's stream leader
 * has stored it on a quorum of replicas — the honest meaning of "writable".
 */
export function natsHealthChecks({ nc, kv, key, name = 'ledger' }: NatsHealthOptions): HealthChecks {
  let jsm: JetStreamManager | undefined;
  const checks: HealthChecks = {
    nats: async function natsRoundTrip() {
      await nc.rtt();
      return true;
    },
    jetstream: async function jetstreamAnswers() {
      jsm ??= await jetstreamManager(nc, { checkAPI: false });
      await jsm.getAccountInfo();
      return true;
    },
  };
  if (kv && key) {
    checks[name] = async function bucketWritable() {
      await kv.put(key, JSON.stringify({ at: new Date().toISOString(), pid: process.pid }));
      return true;
    };
  }
  return checks;
}

/** Liveness of a NATS service: its connection is not closed for good (reconnecting is alive). */
export function natsLiveness(nc: NatsConnection): HealthChecks {
  return { nats: () => !nc.isClosed() };
}

/** Key of a write check: `_health.MACHINE.NAME` (tokens encoded). Never a task key; see the top. */
export function healthKey(machine: string, name: string): string {
  return `_health.${encodeToken(machine)}.${encodeToken(name)}`;
}

/**
 * The readiness probe for services that serve health on their own HTTP server (the gateway's
 * fastify `/readyz`), with the health server's semantics: checks run concurrently, each bounded by
 * `timeoutMs` (default 2 000), one evaluation shared by concurrent probes and reused for `cacheMs`
 * (default 1 000) — a probe storm (anyone who reaches the port may ask) costs one ledger write a second.
 */
export function healthProbe(
  checks: HealthChecks,
  { timeoutMs = 2_000, cacheMs = 1_000 }: { timeoutMs?: number; cacheMs?: number } = {},
): () => Promise<HealthReport> {
  return cached(() => evaluate(checks, timeoutMs), cacheMs);
}

async function evaluate(checks: HealthChecks, timeoutMs: number): Promise<HealthReport> {
  const results: Record<string, boolean> = {};
  const errors: Record<string, string> = {};
  await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        results[name] = (await Promise.race([Promise.resolve().then(check), timeout])) === true;
        if (!results[name]) errors[name] = 'check returned false';
      } catch (err) {
        results[name] = false;
        errors[name] = err instanceof Error ? err.message : String(err);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const ok = Object.values(results).every(Boolean);
  return { status: ok ? 'ok' : 'unavailable', checks: results, ...(ok ? {} : { errors }) };
}

/** Shares one in-flight evaluation and reuses its result for `ms`. */
function cached<T>(run: () => Promise<T>, ms: number): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return function current() {
    const now = Date.now();
    if (!last || now - last.at >= ms) last = { at: now, value: run() };
    return last.value;
  };
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
