import { hostname } from 'node:os';
import { BaseConfigSchema, HealthConfigSchema } from '@shrooms/runtime';
import { parseGatewayMap } from '@shrooms/client';
import { DEFAULT_LIMITS } from '@shrooms/protocol';
import { z } from 'zod';
import { MISSED_POLICIES } from './rules/missed.js';

const ms = (d: number) => z.coerce.number().int().positive().default(d);

/** SHROOMS_GATEWAYS as the client reads it (parseGatewayMap), an entry it cannot read refused. */
const GatewayMapSchema = z
  .string()
  .default('')
  .transform((text, ctx) => {
    const { gateways, malformed } = parseGatewayMap(text);
    for (const item of malformed)
      ctx.addIssue({ code: 'custom', message: `SHROOMS_GATEWAYS entry ${JSON.stringify(item)} is not MACHINE=http://HOST:PORT` });
    return gateways;
  });

export const SchedulerConfigSchema = BaseConfigSchema.extend(HealthConfigSchema.shape).extend({
  /** How often due schedules are looked at. */
  SCHEDULER_TICK_MS: ms(1_000),
  /** Occurrences missed while everything was down: `fire-once` (the latest, once, late) or `skip`. */
  SCHEDULER_MISSED: z.enum(MISSED_POLICIES).default('fire-once'),
  /** An occurrence up to this late is on time (fired normally); later ones follow SCHEDULER_MISSED. */
  SCHEDULER_GRACE_MS: ms(300_000),
  /** A replica that claimed an occurrence has this long to send it before another replica may. */
  SCHEDULER_LEASE_MS: ms(30_000),
  /** One SendMessage to a gateway (returnImmediately, so quick) may take this long. */
  SCHEDULER_SEND_TIMEOUT_MS: ms(10_000),
  /** Retries of an occurrence the gateway could not take back off up to this. */
  SCHEDULER_RETRY_MAX_MS: ms(60_000),
  /** Full re-read of the bucket (besides the live watch), and cleanup of finished schedules. */
  SCHEDULER_RESCAN_MS: ms(15_000),
  /** How often one schedule's awaited tasks are looked at, and finished ones sent back to `replyTo`. */
  SCHEDULER_RESULTS_MS: ms(10_000),
  /** Canceled and done schedules are kept this long, then removed. */
  SCHEDULER_RETAIN_FINISHED_MS: ms(7 * 24 * 3_600_000),
  /** Shortest repeat interval accepted (bounded by default; tests lower it). */
  SCHEDULER_MIN_INTERVAL_MS: ms(60_000),
  /** Gateway of this machine's sessions when neither the map nor their signal names one. */
  SHROOMS_GATEWAY_URL: z
    .string()
    .default('http://127.0.0.1:7387')
    .transform((u) => u.replace(/\/$/, '')),
  /** Gateways by machine, `MACHINE=URL,…`; an entry wins over the URL a session announces in its signal. */
  SHROOMS_GATEWAYS: GatewayMapSchema,
  /** This replica's name in leases (default host-pid). */
  SCHEDULER_REPLICA_ID: z.string().default(() => `${hostname().split('.')[0] || 'scheduler'}-${process.pid}`),
  /** Active schedules; one more is refused with LIMIT_EXCEEDED. */
  LIMIT_SCHEDULES: ms(10_000),
  /**
   * Canceled and done schedules kept; past it the oldest are removed early (before
   * SCHEDULER_RETAIN_FINISHED_MS), those with results still to send back last. A limit of its own
   * rather than counting them in LIMIT_SCHEDULES: nobody is refused a new schedule because of old
   * finished ones that can simply go sooner, and the bucket still holds at most
   * LIMIT_SCHEDULES + LIMIT_FINISHED_SCHEDULES schedules.
   */
  LIMIT_FINISHED_SCHEDULES: ms(1_000),
  LIMIT_RECIPIENTS: ms(16),
  LIMIT_TEXT_BYTES: ms(DEFAULT_LIMITS.textBytes),
  /** Results still to be sent back, per schedule. */
  LIMIT_AWAITING: ms(100),
});
export type SchedulerConfig = z.infer<typeof SchedulerConfigSchema>;
