/**
 * Occurrences of a rule, as pure functions of the rule and an instant.
 *
 * A rule is compiled into numbered candidates (the cursor): for `interval` in seconds, minutes or
 * hours candidate c is `start + c·every` (elapsed time); for calendar rules it is a local date in the
 * rule's zone at the wall time of `at` (resolved by `resolveLocal`, so DST gaps and overlaps follow the
 * stated rules). Some candidates are not occurrences (a weekday not asked for, a time before `at`).
 * Storing the cursor with the occurrence lets the next one be found without searching from the start,
 * and keeps a monthly-on-the-31st rule on the 31st after it fell on a 30th.
 */
import { type Occurrence, type Repeat, type ScheduleRule as Rule, UNIT_MS, type Weekday, WEEKDAYS } from '@shrooms/protocol';
import {
  DAY_MS,
  addDays,
  addMonthsClamped,
  daysBetween,
  isValidZone,
  isoWeekday,
  localOf,
  parseAt,
  resolveLocal,
  sameDate,
  type LocalDate,
  type LocalDateTime,
} from './time.js';

export interface CompiledRule {
  rule: Rule;
  zone: string;
  /** The first instant the rule may fire at (`at` resolved). */
  startMs: number;
  /** Wall time of `at` in the zone: calendar repeats keep its time of day. */
  anchor: LocalDateTime;
  untilMs?: number;
  count?: number;
  /** Elapsed-time period in ms (interval in seconds, minutes, hours). */
  periodMs?: number;
  /** Calendar step: days between candidates (daily, interval in days, weekly scans day by day). */
  stepDays?: number;
  weekdays?: ReadonlySet<number>;
  monthDay?: number;
}

export class RuleError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'RuleError';
  }
}

/** Checks and compiles a rule; throws RuleError naming what is wrong. */
export function compileRule(rule: Rule): CompiledRule {
  if (!isValidZone(rule.zone)) throw new RuleError(`unknown time zone ${JSON.stringify(rule.zone)} (use an IANA name like Europe/Berlin)`);
  let parsed;
  try {
    parsed = parseAt(rule.at);
  } catch (e) {
    throw new RuleError((e as Error).message);
  }
  const startMs = parsed.instantMs ?? resolveLocal(parsed.local, rule.zone);
  const anchor = parsed.instantMs !== undefined ? localOf(parsed.instantMs, rule.zone) : parsed.local;
  const out: CompiledRule = { rule, zone: rule.zone, startMs, anchor };
  const r = rule.repeat;
  if (!r) return out;
  if (r.until !== undefined) {
    out.untilMs = Date.parse(r.until);
    if (out.untilMs < startMs) throw new RuleError(`until ${r.until} is before the first occurrence`);
  }
  if (r.count !== undefined) out.count = r.count;
  switch (r.freq) {
    case 'daily':
      out.stepDays = 1;
      break;
    case 'weekly':
      out.stepDays = 1;
      out.weekdays = new Set((r.weekdays ?? [WEEKDAYS[isoWeekday(anchor)]!]).map((w: Weekday) => WEEKDAYS.indexOf(w)));
      break;
    case 'monthly':
      out.monthDay = r.day ?? anchor.day;
      break;
    case 'yearly':
      break;
    case 'interval':
      if (r.unit === 'days') out.stepDays = r.every;
      else out.periodMs = r.every * UNIT_MS[r.unit];
      break;
  }
  return out;
}

/** The wall date of candidate `c` for calendar rules. */
function candidateDate(cr: CompiledRule, c: number): LocalDate | null {
  const r = cr.rule.repeat as Repeat;
  if (cr.stepDays !== undefined) {
    const d = addDays(cr.anchor, c * cr.stepDays);
    if (cr.weekdays && !cr.weekdays.has(isoWeekday(d))) return null;
    return d;
  }
  if (r.freq === 'monthly') return addMonthsClamped(cr.anchor, c, cr.monthDay!);
  // yearly: same month, the day clamped (Feb 29 → Feb 28 in other years)
  return addMonthsClamped(cr.anchor, 12 * c, cr.anchor.day);
}

/** Instant of candidate `c`, or null when the candidate is not an occurrence. Ignores until/count. */
function candidate(cr: CompiledRule, c: number): number | null {
  if (!cr.rule.repeat) return c === 0 ? cr.startMs : null;
  if (cr.periodMs !== undefined) return cr.startMs + c * cr.periodMs;
  const d = candidateDate(cr, c);
  if (!d) return null;
  // The date of `at` itself is `at` exactly (also when `at` was the second of two ambiguous instants).
  const ms = sameDate(d, cr.anchor)
    ? cr.startMs
    : resolveLocal({ ...d, hour: cr.anchor.hour, minute: cr.anchor.minute, second: cr.anchor.second }, cr.zone);
  return ms < cr.startMs ? null : ms;
}

/** Longest run of non-occurrence candidates between two occurrences (weekly: 6 days). */
const MAX_GAP = 400;

function occurrence(cr: CompiledRule, cursor: number, ms: number, seq: number): Occurrence | null {
  if (cr.untilMs !== undefined && ms > cr.untilMs) return null;
  if (cr.count !== undefined && seq >= cr.count) return null;
  return { at: new Date(ms).toISOString(), cursor, seq };
}

/** First candidate at or after `from` that is an occurrence, numbered `seq`. */
function scan(cr: CompiledRule, from: number, seq: number): Occurrence | null {
  if (!cr.rule.repeat && from > 0) return null;
  for (let c = from; c < from + MAX_GAP; c++) {
    const ms = candidate(cr, c);
    if (ms !== null) return occurrence(cr, c, ms, seq);
  }
  return null;
}

/** The first occurrence of a rule (null when until/count leave none). */
export function firstOccurrence(cr: CompiledRule): Occurrence | null {
  return scan(cr, 0, 0);
}

/** The occurrence after `prev`, or null when the rule is finished. */
export function nextOccurrence(cr: CompiledRule, prev: Occurrence): Occurrence | null {
  return scan(cr, prev.cursor + 1, prev.seq + 1);
}

/**
 * A candidate index to start a forward scan from: every occurrence from it on that is before `t` is
 * found by the scan, and at least a week (or two months, two years) of candidates lies before `t`, so
 * a rule that skips days (weekly) still has its last occurrence before `t` inside the scan.
 */
function cursorBelow(cr: CompiledRule, t: number): number {
  const span = t - cr.startMs;
  if (span <= 0 || !cr.rule.repeat) return 0;
  if (cr.periodMs !== undefined) return Math.floor(span / cr.periodMs);
  const r = cr.rule.repeat as Repeat;
  const target = localOf(t, cr.zone);
  if (cr.stepDays !== undefined) return Math.max(0, Math.floor((daysBetween(cr.anchor, target) - 8) / cr.stepDays));
  const months = (target.year - cr.anchor.year) * 12 + (target.month - cr.anchor.month);
  if (r.freq === 'monthly') return Math.max(0, months - 2);
  return Math.max(0, Math.floor(months / 12) - 2);
}

/**
 * The ordinal of the first occurrence at candidate `c` or later, after `from`: exact when every
 * candidate after the first is an occurrence, an estimate for weekly rules (only used for counting
 * missed occurrences; a rule with `count` never jumps).
 */
function seqAt(cr: CompiledRule, from: Occurrence, c: number): number {
  const skipped = c - from.cursor - 1;
  if (skipped <= 0) return from.seq + 1;
  return from.seq + 1 + (cr.weekdays ? Math.round((skipped * cr.weekdays.size) / 7) : skipped);
}

/**
 * The first occurrence at or after `t`, counting from `from` (an occurrence not after `t`). Fixed
 * intervals jump there; calendar rules step (one step a day at most, so years of downtime are cheap);
 * with a `count` the ordinals are exact, without one `seq` is only bookkeeping.
 */
export function occurrenceAtOrAfter(cr: CompiledRule, t: number, from: Occurrence): Occurrence | null {
  if (Date.parse(from.at) >= t) return from;
  if (cr.periodMs !== undefined) {
    const c = Math.max(from.cursor, Math.ceil((t - cr.startMs) / cr.periodMs));
    return occurrence(cr, c, cr.startMs + c * cr.periodMs, from.seq + (c - from.cursor));
  }
  if (cr.count === undefined) {
    const c = Math.max(from.cursor + 1, cursorBelow(cr, t));
    let o = scan(cr, c, seqAt(cr, from, c));
    while (o && Date.parse(o.at) < t) o = nextOccurrence(cr, o);
    return o;
  }
  let o: Occurrence | null = from;
  while (o && Date.parse(o.at) < t) o = nextOccurrence(cr, o);
  return o;
}

/** The last occurrence strictly before `t`, counting from `from` (which is before `t`). */
export function lastOccurrenceBefore(cr: CompiledRule, t: number, from: Occurrence): Occurrence {
  let last = from;
  if (cr.periodMs !== undefined) {
    const after = occurrenceAtOrAfter(cr, t, from);
    // Fixed period: the one before the first at/after t, or the bounded last one.
    const c = after ? after.cursor - 1 : Math.floor((Math.min(t - 1, cr.untilMs ?? Infinity) - cr.startMs) / cr.periodMs);
    const capped = cr.count !== undefined ? Math.min(c, cr.count - 1) : c;
    if (capped > from.cursor)
      last = { at: new Date(cr.startMs + capped * cr.periodMs).toISOString(), cursor: capped, seq: from.seq + (capped - from.cursor) };
    return last;
  }
  const start = cr.count === undefined ? Math.max(from.cursor + 1, cursorBelow(cr, t)) : from.cursor + 1;
  let o = scan(cr, start, seqAt(cr, from, start));
  while (o && Date.parse(o.at) < t) {
    last = o;
    o = nextOccurrence(cr, o);
  }
  return last;
}

/** The first `n` occurrences (for previews and tests). */
export function occurrences(cr: CompiledRule, n: number): Occurrence[] {
  const out: Occurrence[] = [];
  let o = firstOccurrence(cr);
  while (o && out.length < n) {
    out.push(o);
    o = nextOccurrence(cr, o);
  }
  return out;
}

export { DAY_MS };
