/**
 * The scheduler's NATS service (`shrooms.sched.create|list|cancel`, spec §9) as the tools and the
 * CLI use it. Speaks the service's JSON payloads, so it works with any scheduler replica the moment
 * one runs; until then every call is `SCHEDULER_UNAVAILABLE` ("the scheduler is not running").
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { ShroomsError, fromWireError, subjects, type WireError } from '@shrooms/protocol';
import { z } from 'zod';
import type { NatsSettings } from './options.js';

export type SchedulerOp = 'create' | 'list' | 'cancel';

/** How requests reach the scheduler; injectable (a bridge passes its own connection). */
export interface SchedulerPort {
  request(op: SchedulerOp, body: unknown): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** What the client reads of a schedule (the scheduler owns the full record). */
export const ScheduleViewSchema = z
  .object({
    id: z.string(),
    recipients: z.array(z.string()),
    prompt: z.string(),
    state: z.string(),
    rule: z.object({ at: z.string(), zone: z.string(), repeat: z.unknown().optional() }).loose(),
    next: z.object({ at: z.string() }).loose().nullable().optional(),
    owner: z.object({ device: z.string(), from: z.string().optional() }).loose().optional(),
    replyTo: z.string().optional(),
    fired: z.number().optional(),
    missed: z.number().optional(),
    createdAt: z.string().optional(),
  })
  .loose();
export type ScheduleView = z.infer<typeof ScheduleViewSchema>;

const unavailable = (why: string) => new ShroomsError('SCHEDULER_UNAVAILABLE', `the scheduler is not running (${why})`);

export interface NatsSchedulerOptions {
  /** Use this connection (not closed by `close`); else connect with `settings` on first use. */
  nc?: NatsConnection;
  settings?: NatsSettings;
  /** How long one request may wait for the scheduler, ms (default 5 s). */
  timeoutMs?: number;
  /** How long to try reaching NATS, ms (default 2 s). */
  connectTimeoutMs?: number;
}

/**
 * The default port: the schedule methods of this machine's gateway (`POST /a2a`, JSON-RPC
 * CreateSchedule | ListSchedules | CancelSchedule). Needs only HTTP, and the gateway puts the
 * verified device in as the owner.
 */
export function gatewayScheduler(rpc: (method: string, params: unknown) => Promise<unknown>): SchedulerPort {
  const methods = { create: 'CreateSchedule', list: 'ListSchedules', cancel: 'CancelSchedule' } as const;
  return {
    async request(op, body) {
      return (await rpc(methods[op], body)) as Record<string, unknown>;
    },
    async close() {},
  };
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
      const nc = await connection();
      let data: { ok?: boolean; error?: WireError } & Record<string, unknown>;
      try {
        const reply = await nc.request(subjects.scheduler(op), JSON.stringify(body), { timeout: opts.timeoutMs ?? 5_000 });
        data = reply.json();
      } catch (err) {
        throw unavailable(`nothing answered ${subjects.scheduler(op)}: ${(err as Error).message}`);
      }
      if (data.ok === false)
        throw fromWireError(data.error ?? { key: 'INTERNAL', message: 'the scheduler answered an error without details' });
      return data;
    },
    async close() {
      if (!own) return;
      const nc = await own.catch(() => undefined);
      own = undefined;
      await nc?.close().catch(() => {});
    },
  };
}
