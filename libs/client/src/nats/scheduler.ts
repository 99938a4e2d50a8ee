/**
 * The scheduler's NATS service (`shrooms.sched.create|list|cancel`) and its one client: requests
 * to the service, replies parsed, refusals rethrown as ShroomsError with their codes. Nobody
 * answering (no scheduler running, or NATS away) is SCHEDULER_UNAVAILABLE (retryable).
 * `scheduleClient` is it typed, on a connection the caller owns (the gateway, tests);
 * `natsScheduler` is it as the tools' SchedulerPort, on a given connection or one of its own.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import {
  ShroomsError,
  subjects,
  type CancelScheduleRequest,
  type CreateScheduleReply,
  type CreateScheduleRequest,
  type ListSchedulesReply,
  type ListSchedulesRequest,
  type Schedule,
} from '@shrooms/protocol';
import { requestJson } from '@shrooms/runtime';
import type { NatsSettings } from '../options.js';
import type { SchedulerOp, SchedulerPort } from '../schedules.js';

const DEFAULT_TIMEOUT_MS = 5_000;

const unavailable = (why: string) => new ShroomsError('SCHEDULER_UNAVAILABLE', `the scheduler is not running (${why})`);

/** One request to the service; `timeoutMs`: how long to wait for a scheduler replica to answer. */
function schedulerRequest<T>(nc: NatsConnection, op: SchedulerOp, body: unknown, timeoutMs: number): Promise<T> {
  return requestJson<T>(nc, subjects.scheduler(op), body, {
    timeoutMs,
    unavailable: () => unavailable(`no replica answered on ${subjects.scheduler(op)} within ${timeoutMs} ms`),
  });
}

export interface ScheduleClient {
  /** Creates a schedule (or returns the existing one for a resent `id`). */
  create(req: CreateScheduleRequest): Promise<CreateScheduleReply>;
  /** Schedules matching the filters (default: active ones), soonest first. */
  list(req?: ListSchedulesRequest): Promise<ListSchedulesReply>;
  /** Cancels a schedule; it fires no more. SCHEDULE_NOT_FOUND, NOT_ALLOWED. */
  cancel(req: CancelScheduleRequest): Promise<Schedule>;
}

/** `timeoutMs` (default 5000): how long to wait for a scheduler replica to answer. */
export function scheduleClient(nc: NatsConnection, opts: { timeoutMs?: number } = {}): ScheduleClient {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    async create(req) {
      const { schedule, created } = await schedulerRequest<CreateScheduleReply>(nc, 'create', req, timeoutMs);
      return { schedule, created };
    },
    async list(req = {}) {
      const { schedules, total } = await schedulerRequest<ListSchedulesReply>(nc, 'list', req, timeoutMs);
      return { schedules, total };
    },
    async cancel(req) {
      return (await schedulerRequest<{ schedule: Schedule }>(nc, 'cancel', req, timeoutMs)).schedule;
    },
  };
}

export interface NatsSchedulerOptions {
  /** Use this connection (not closed by `close`); else connect with `settings` on first use. */
  nc?: NatsConnection;
  settings?: NatsSettings;
  /** How long one request may wait for the scheduler, ms (default 5 s). */
  timeoutMs?: number;
  /** How long to try reaching NATS, ms (default 2 s). */
  connectTimeoutMs?: number;
}

export function natsScheduler(opts: NatsSchedulerOptions): SchedulerPort {
  let own: Promise<NatsConnection> | undefined;
  const url = opts.settings?.url ?? 'nats://127.0.0.1:4222';

  async function connection(): Promise<NatsConnection> {
    if (opts.nc) return opts.nc;
    own ??= (async function connectOnce() {
      const { connect } = await import('@nats-io/transport-node');
      const s = opts.settings;
      const extra: Record<string, unknown> = {};
      if (s?.user) Object.assign(extra, { user: s.user, pass: s.pass });
      if (s?.token) Object.assign(extra, { token: s.token });
      if (s?.creds) {
        const { credsAuthenticator } = await import('@nats-io/nats-core');
        const { readFile } = await import('node:fs/promises');
        extra.authenticator = credsAuthenticator(await readFile(s.creds));
      }
      return connect({
        servers: url.split(',').map((x) => x.trim()),
        name: 'shrooms client',
        timeout: opts.connectTimeoutMs ?? 2_000,
        maxReconnectAttempts: 0,
        ...extra,
      });
    })();
    try {
      return await own;
    } catch (err) {
      own = undefined;
      throw unavailable(`cannot reach NATS at ${url}: ${(err as Error).message}; set NATS_URL`);
    }
  }

  return {
    async request(op, body) {
      return schedulerRequest<Record<string, unknown>>(await connection(), op, body, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    },
    async close() {
      if (!own) return;
      const nc = await own.catch(() => undefined);
      own = undefined;
      await nc?.close().catch(() => {});
    },
  };
}
