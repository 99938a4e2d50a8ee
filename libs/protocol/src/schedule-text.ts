/**
 * Schedules as text: the short form of a repeat (parsed and written), occurrence names in message
 * ids, and wall times for people — one copy for the scheduler, the gateway and the tools.
 *
 * A short text form of a repeat, for people and for A2A metadata (`shrooms/repeat`):
 *
 *   daily | weekly | weekly:mon,thu | monthly | monthly:31 | yearly
 *   every 30s | every 15m | every 2h | every 3d      (also "every 15 minutes", "every day")
 *
 * followed by optional `until=<ISO instant>` and `count=<n>`, separated by `;` or spaces:
 * `weekly:mon;count=10`, `every 2h until=2026-12-31T23:00:00Z`.
 *
 * A delay (`parseDelay`: `10m`, `1h30m`, `2 days`) says when a schedule first fires, counted from now.
 */
import { createHash } from 'node:crypto';
import { RepeatSchema, WEEKDAYS, type IntervalUnit, type Repeat, type Weekday } from './scheduler.js';

const UNITS: Record<string, IntervalUnit> = {
  s: 'seconds',
  sec: 'seconds',
  secs: 'seconds',
  second: 'seconds',
  seconds: 'seconds',
  m: 'minutes',
  min: 'minutes',
  mins: 'minutes',
  minute: 'minutes',
  minutes: 'minutes',
  h: 'hours',
  hr: 'hours',
  hrs: 'hours',
  hour: 'hours',
  hours: 'hours',
  d: 'days',
  day: 'days',
  days: 'days',
};

/** Each interval unit in ms (a day as 24 h: the scheduler steps repeats of days by the calendar instead). */
export const UNIT_MS: Record<IntervalUnit, number> = { seconds: 1_000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 };

/** The longest delay `parseDelay` takes: a year (a later time is written as an `at`). */
export const MAX_DELAY_MS = 366 * UNIT_MS.days;

/**
 * A delay as people write it — `90s`, `10m`, `2h`, `3d`, `10 minutes`, `1 hour`, `1h30m` — in ms.
 * A RangeError saying what is wrong otherwise: no amount or unit, zero, or more than a year.
 */
export function parseDelay(input: string): number {
  const text = input.trim().toLowerCase();
  const part = /(\d+)\s*([a-z]+)\s*/gy;
  let ms = 0;
  let m: RegExpExecArray | null;
  while (part.lastIndex < text.length && (m = part.exec(text))) {
    const unit = UNITS[m[2]!];
    if (!unit) throw new RangeError(`delay ${JSON.stringify(input)}: unknown unit ${m[2]} (try 90s, 10m, 2h, 3d)`);
    ms += Number(m[1]) * UNIT_MS[unit];
  }
  if (!text || part.lastIndex !== text.length)
    throw new RangeError(`delay ${JSON.stringify(input)}: not a delay (try 90s, 10m, 2h, 1h30m, 3d)`);
  if (ms <= 0) throw new RangeError(`delay ${JSON.stringify(input)}: must be more than nothing`);
  if (ms > MAX_DELAY_MS) throw new RangeError(`delay ${JSON.stringify(input)}: at most a year; give a later time as an \`at\``);
  return ms;
}

export class RepeatSyntaxError extends RangeError {
  constructor(text: string, why: string) {
    super(`repeat ${JSON.stringify(text)}: ${why} (try daily, weekly:mon,thu, monthly:31, yearly, every 15m; add until=… or count=…)`);
    this.name = 'RepeatSyntaxError';
  }
}

/** Parses the short form; an object is checked against the schema instead. */
export function parseRepeat(input: unknown): Repeat {
  if (typeof input !== 'string') {
    const r = RepeatSchema.safeParse(input);
    if (!r.success)
      throw new RepeatSyntaxError(
        JSON.stringify(input),
        r.error.issues.map((i) => `${i.path.join('.') || 'repeat'}: ${i.message}`).join('; '),
      );
    return r.data;
  }
  const text = input.trim().toLowerCase();
  const bounds: { until?: string; count?: number } = {};
  let head = text.replace(/[;\s]+(until|count)\s*=\s*(\S+?)(?=$|[;\s])/g, (_all, k: string, v: string) => {
    if (k === 'count') {
      if (!/^\d+$/.test(v)) throw new RepeatSyntaxError(input, `count ${v} is not a whole number`);
      bounds.count = Number(v);
    } else bounds.until = v.toUpperCase();
    return '';
  });
  head = head.trim();
  let base: Record<string, unknown>;
  const every = /^every\s*(\d+)?\s*([a-z]+)$/.exec(head);
  if (every) {
    const unit = UNITS[every[2]!];
    if (!unit) throw new RepeatSyntaxError(input, `unknown unit ${every[2]}`);
    base = { freq: 'interval', every: every[1] ? Number(every[1]) : 1, unit };
  } else {
    const [freq, arg] = head.split(':', 2) as [string, string | undefined];
    if (freq === 'daily' && arg === undefined) base = { freq };
    else if (freq === 'yearly' && arg === undefined) base = { freq };
    else if (freq === 'weekly') {
      const weekdays = arg ? arg.split(',').map((w) => w.trim().slice(0, 3)) : undefined;
      if (weekdays?.some((w) => !(WEEKDAYS as readonly string[]).includes(w)))
        throw new RepeatSyntaxError(input, 'weekdays are mon,tue,wed,thu,fri,sat,sun');
      base = weekdays ? { freq, weekdays: [...new Set(weekdays)] as Weekday[] } : { freq };
    } else if (freq === 'monthly') {
      if (arg !== undefined && !/^\d{1,2}$/.test(arg)) throw new RepeatSyntaxError(input, 'monthly:DAY takes a day of the month, 1–31');
      base = arg ? { freq, day: Number(arg) } : { freq };
    } else throw new RepeatSyntaxError(input, 'not a repeat');
  }
  return parseRepeat({ ...base, ...bounds }) as Repeat;
}

/** The short form of a repeat (inverse of `parseRepeat`), for lists and logs. */
export function formatRepeat(r: Repeat): string {
  let head: string;
  switch (r.freq) {
    case 'weekly':
      head = r.weekdays ? `weekly:${r.weekdays.join(',')}` : 'weekly';
      break;
    case 'monthly':
      head = r.day !== undefined ? `monthly:${r.day}` : 'monthly';
      break;
    case 'interval':
      head = `every ${r.every}${r.unit[0]}`;
      break;
    default:
      head = r.freq;
  }
  return [head, r.until !== undefined ? `until=${r.until}` : '', r.count !== undefined ? `count=${r.count}` : ''].filter(Boolean).join(';');
}

// ---- occurrences as people and message ids name them ---------------------------------------------

/** `20261012T060000Z`: the occurrence instant in UTC, to the second. */
export function occurrenceStamp(at: string | number): string {
  return new Date(at)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

/** What every message id of the scheduler's starts with: a gateway takes no other sender's (docs/security.md). */
export const SCHEDULED_MESSAGE_ID_PREFIX = 'sched-';

/** Whether `messageId` has the form of an occurrence's or a result's (reserved for the scheduler). */
export function isScheduledMessageId(messageId: string): boolean {
  return messageId.startsWith(SCHEDULED_MESSAGE_ID_PREFIX);
}

/**
 * The message id of one occurrence: the same for every send of it (a resend after a crash or by the
 * other replica is the same task), distinct for every occurrence. At most 6 + 64 + 1 + 16 characters.
 */
export function occurrenceMessageId(scheduleId: string, at: string | number): string {
  return `${SCHEDULED_MESSAGE_ID_PREFIX}${scheduleId}-${occurrenceStamp(at)}`;
}

/**
 * The message id of an occurrence's result sent back to the schedule's `replyTo`: derived from the
 * occurrence and the recipient, so it is sent once whatever replica sends it, and a gateway can tell
 * a real result's id from any other.
 */
export function resultMessageId(scheduleId: string, at: string | number, recipient: string): string {
  return `${occurrenceMessageId(scheduleId, at)}-re-${createHash('sha256').update(recipient).digest('hex').slice(0, 10)}`;
}

/** `Mon 12 Oct 2026 08:00 (Europe/Berlin)`: the wall time the owner asked for, in the schedule's zone. */
export function formatWallTime(at: string | number, zone: string): string {
  return `${formatWallClock(at, zone)} (${zone})`;
}

/** `Mon 12 Oct 2026 08:00`: the wall time of `at` in `zone`, seconds only when set. */
export function formatWallClock(at: string | number, zone: string): string {
  const w = readWallClock(at, zone);
  const [hh, mm, ss] = [w.hour, w.minute, w.second].map(pad2);
  const time = w.second !== 0 ? `${hh}:${mm}:${ss}` : `${hh}:${mm}`;
  return `${w.weekday} ${w.day} ${MONTHS[w.month - 1]} ${w.year} ${time}`;
}

/** The wall clock of an instant in an IANA zone, as numbers (month 1–12), and the weekday's short name. */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** `Mon`…`Sun` */
  weekday: string;
}

/** The wall clock of `at` in `zone`; a RangeError for a zone Node does not know. */
export function readWallClock(at: string | number, zone: string): WallClock {
  const p = Object.fromEntries(
    wallClockFormat(zone)
      .formatToParts(new Date(at))
      .map((x) => [x.type, x.value]),
  );
  const n = (k: string) => Number(p[k]);
  return {
    year: n('year'),
    month: n('month'),
    day: n('day'),
    hour: n('hour'),
    minute: n('minute'),
    second: n('second'),
    weekday: p.weekday!,
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n: number) => String(n).padStart(2, '0');

/** One formatter per zone: building one loads the zone's data, which costs a process megabytes once. */
const wallClockFormats = new Map<string, Intl.DateTimeFormat>();
function wallClockFormat(zone: string): Intl.DateTimeFormat {
  let f = wallClockFormats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      weekday: 'short',
      day: 'numeric',
      month: 'numeric',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    wallClockFormats.set(zone, f);
  }
  return f;
}

/** What the header line of an occurrence fired late (SCHEDULER_MISSED=fire-once) ends with. */
const LATE_SUFFIX = ', sent late (missed while the scheduler was down)';

/**
 * The worker's header line: `scheduled by laptop (laptop/webapp) for Mon 12 Oct 2026 08:00 (Europe/Berlin)`,
 * with LATE_SUFFIX when `late` (default false). One copy: the scheduler writes it, the gateway
 * derives it again to check the line a proven occurrence carries.
 */
export function scheduledByLine(
  owner: { device: string; from?: string | undefined },
  at: string | number,
  zone: string,
  late = false,
): string {
  const who = owner.from ? `${owner.device} (${owner.from})` : owner.device;
  return `scheduled by ${who} for ${formatWallTime(at, zone)}${late ? LATE_SUFFIX : ''}`;
}
