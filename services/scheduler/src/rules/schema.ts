/**
 * What a schedule's time rule looks like on the wire and in the store. The zod schema is the type.
 *
 * `at` is either a local date-time (`2026-10-12T08:00`, read in `zone`) or an instant with an offset
 * (`2026-10-12T06:00:00Z`); RFC 9557's bracket form `2026-10-12T08:00[Europe/Berlin]` names the zone
 * inline. Repeats are computed in `zone`, so 08:00 stays 08:00 across daylight-saving changes.
 */
import { z } from 'zod';

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

export const RuleSchema = z.object({
  /** Local date-time (read in `zone`) or an instant with an offset, as given (without a bracket zone). */
  at: z.string().min(1).max(64),
  /** IANA time zone the rule is computed in. */
  zone: z.string().min(1).max(64),
  repeat: RepeatSchema.optional(),
});
export type Rule = z.infer<typeof RuleSchema>;

/** One occurrence: its instant, the rule's candidate index it came from, and its ordinal (from 0). */
export const OccurrenceSchema = z.object({
  at: z.iso.datetime({ offset: true }),
  cursor: z.number().int().min(0),
  seq: z.number().int().min(0),
});
export type Occurrence = z.infer<typeof OccurrenceSchema>;
