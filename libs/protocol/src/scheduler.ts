/**
 * The scheduler's NATS contract (`subjects.scheduler('create'|'list'|'cancel')`, spec §9) and the
 * schedule record kept in KV `BUCKETS.schedules`. The zod schema is the type; each request is parsed
 * once at the endpoint.
 *
 * Time rules: `at` is either a local date-time (`2026-10-12T08:00`, read in `zone`) or an instant
 * with an offset (`2026-10-12T06:00:00Z`); RFC 9557's bracket form `2026-10-12T08:00[Europe/Berlin]`
 * names the zone inline. Repeats are computed in `zone`, so 08:00 stays 08:00 across daylight-saving
 * changes.
 */
import { z } from 'zod';
import { OriginSchema } from './wire.js';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export const WeekdaySchema = z.enum(WEEKDAYS);
export type Weekday = z.infer<typeof WeekdaySchema>;

export const INTERVAL_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const;
export const IntervalUnitSchema = z.enum(INTERVAL_UNITS);
export type IntervalUnit = z.infer<typeof IntervalUnitSchema>;

/** Most occurrences a `count` may ask for. */
export const MAX_COUNT = 100_000;

const bounds = {
  /** Last instant an occurrence may fall on (inclusive), ISO with offset. */
  until: z.iso.datetime({ offset: true }).optional(),
  /** Number of occurrences in all (fired or missed), the first included. */
  count: z.number().int().min(1).max(MAX_COUNT).optional(),
};

export const RepeatSchema = z.discriminatedUnion('freq', [
  z.object({ freq: z.literal('daily'), ...bounds }).strict(),
  /** `weekdays` defaults to the weekday of `at`. */
  z.object({ freq: z.literal('weekly'), weekdays: z.array(WeekdaySchema).min(1).max(7).optional(), ...bounds }).strict(),
  /** `day` defaults to the day of `at`; past a short month's end it falls on that month's last day. */
  z.object({ freq: z.literal('monthly'), day: z.number().int().min(1).max(31).optional(), ...bounds }).strict(),
  /** On the month and day of `at`; February 29th falls on February 28th in other years. */
  z.object({ freq: z.literal('yearly'), ...bounds }).strict(),
  /** Seconds, minutes and hours are elapsed time; days are calendar days at the wall time of `at`. */
  z.object({ freq: z.literal('interval'), every: z.number().int().min(1).max(1_000_000), unit: IntervalUnitSchema, ...bounds }).strict(),
]);
export type Repeat = z.infer<typeof RepeatSchema>;

export const ScheduleRuleSchema = z.object({
  /** Local date-time (read in `zone`) or an instant with an offset, as given (without a bracket zone). */
  at: z.string().min(1).max(64),
  /** IANA time zone the rule is computed in. */
  zone: z.string().min(1).max(64),
  repeat: RepeatSchema.optional(),
});
export type ScheduleRule = z.infer<typeof ScheduleRuleSchema>;

/** One occurrence: its instant, the rule's candidate index it came from, and its ordinal (from 0). */
export const OccurrenceSchema = z.object({
  at: z.iso.datetime({ offset: true }),
  cursor: z.number().int().min(0),
  seq: z.number().int().min(0),
});
export type Occurrence = z.infer<typeof OccurrenceSchema>;

// ---- the schedule -------------------------------------------------------------------------------

/** Schedule ids: short, readable, safe in a message id (`sched-<id>-<stamp>`). */
export const SCHEDULE_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const ScheduleIdSchema = z
  .string()
  .regex(SCHEDULE_ID_RE, 'a schedule id is 1–64 letters, digits, _ or -, starting with a letter or digit');

/** `MACHINE/SESSION`. */
export const AgentRefSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\/[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'an agent is MACHINE/SESSION');

export const SCHEDULE_STATES = ['active', 'canceled', 'done'] as const;
export const ScheduleStateSchema = z.enum(SCHEDULE_STATES);
export type ScheduleState = z.infer<typeof ScheduleStateSchema>;

/** What became of one occurrence for one recipient. */
export const DeliverySchema = z.object({
  recipient: z.string(),
  /** sent: a new task; existing: the task was already there (a resend); refused: the gateway said no for good. */
  outcome: z.enum(['sent', 'existing', 'refused', 'failed']),
  taskId: z.string().optional(),
  error: z.object({ key: z.string(), message: z.string() }).optional(),
});
export type Delivery = z.infer<typeof DeliverySchema>;

/** A task whose result goes back to `replyTo` once it is finished. */
export const AwaitingSchema = z.object({
  recipient: z.string(),
  taskId: z.string(),
  occurrence: z.iso.datetime({ offset: true }),
});
export type Awaiting = z.infer<typeof AwaitingSchema>;

export const ScheduleSchema = z.object({
  id: ScheduleIdSchema,
  recipients: z.array(AgentRefSchema).min(1),
  prompt: z.string(),
  /** Who scheduled it: the verified device and the claimed session. */
  owner: OriginSchema,
  /** `MACHINE/SESSION` that gets each occurrence's result back, if any. */
  replyTo: AgentRefSchema.optional(),
  rule: ScheduleRuleSchema,
  state: ScheduleStateSchema,
  /** The occurrence due next; null once the rule has none left. */
  next: OccurrenceSchema.nullable(),
  /** A replica is sending `next` until `until`; after that any replica may take it over. */
  lease: z.object({ by: z.string(), until: z.iso.datetime({ offset: true }), occurrence: z.iso.datetime({ offset: true }) }).optional(),
  /** The last send of `next` failed for a reason that may pass; retried from `notBefore`. */
  retry: z
    .object({
      occurrence: z.iso.datetime({ offset: true }),
      attempts: z.number().int().min(1),
      notBefore: z.iso.datetime({ offset: true }),
      error: z.string(),
    })
    .optional(),
  /** Occurrences sent, and occurrences given up (missed while down, per the policy). */
  fired: z.number().int().min(0),
  missed: z.number().int().min(0),
  last: z
    .object({
      occurrence: z.iso.datetime({ offset: true }),
      firedAt: z.iso.datetime({ offset: true }),
      late: z.boolean(),
      deliveries: z.array(DeliverySchema),
    })
    .optional(),
  awaiting: z.array(AwaitingSchema).default([]),
  createdAt: z.iso.datetime({ offset: true }),
  updatedAt: z.iso.datetime({ offset: true }),
  canceledBy: z.string().optional(),
});
export type Schedule = z.infer<typeof ScheduleSchema>;

// ---- create -------------------------------------------------------------------------------------

export const CreateScheduleRequestSchema = z.object({
  /** Optional id chosen by the caller: creating the same id again returns the existing schedule. */
  id: ScheduleIdSchema.optional(),
  recipients: z.array(AgentRefSchema).min(1),
  prompt: z.string().min(1),
  /** Local date-time with `zone`, an instant (`…Z`, `…+02:00`), or `2026-10-12T08:00[Europe/Berlin]`. */
  at: z.string().min(1).max(96),
  /** IANA zone; required for a local `at` unless given in brackets; default for an instant: UTC. */
  zone: z.string().min(1).max(64).optional(),
  /** A repeat object or its short form (`weekly:mon`, `every 15m;count=4`). */
  repeat: z.union([RepeatSchema, z.string().min(1).max(200)]).optional(),
  /** Who asks: verified device (set by the gateway / the local tools), claimed session. */
  origin: OriginSchema,
  replyTo: AgentRefSchema.optional(),
});
export type CreateScheduleRequest = z.infer<typeof CreateScheduleRequestSchema>;

export const CreateScheduleReplySchema = z.object({ schedule: ScheduleSchema, created: z.boolean() });
export type CreateScheduleReply = z.infer<typeof CreateScheduleReplySchema>;

// ---- list ---------------------------------------------------------------------------------------

export const ListSchedulesRequestSchema = z.object({
  id: ScheduleIdSchema.optional(),
  /** Only schedules with this recipient (`MACHINE/SESSION`). */
  recipient: AgentRefSchema.optional(),
  /** Only schedules scheduled by this device … */
  device: z.string().optional(),
  /** … or claimed by this session (`MACHINE/SESSION`). */
  from: z.string().optional(),
  state: z.enum([...SCHEDULE_STATES, 'all']).default('active'),
  limit: z.number().int().min(1).max(1000).default(100),
});
export type ListSchedulesRequest = z.input<typeof ListSchedulesRequestSchema>;

export const ListSchedulesReplySchema = z.object({ schedules: z.array(ScheduleSchema), total: z.number().int() });
export type ListSchedulesReply = z.infer<typeof ListSchedulesReplySchema>;

// ---- cancel -------------------------------------------------------------------------------------

export const CancelScheduleRequestSchema = z.object({ id: ScheduleIdSchema, origin: OriginSchema });
export type CancelScheduleRequest = z.infer<typeof CancelScheduleRequestSchema>;

export const CancelScheduleReplySchema = z.object({ schedule: ScheduleSchema });
export type CancelScheduleReply = z.infer<typeof CancelScheduleReplySchema>;
