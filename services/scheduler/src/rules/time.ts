/**
 * Wall times in IANA zones, resolved to instants by rules we state rather than by a library's guess:
 *
 * - A wall time that does not exist (the clocks jump forward over it) resolves to the first instant
 *   after the gap: 02:30 on Europe/Berlin's spring-forward day is the moment the clocks jump, 03:00.
 * - A wall time that happens twice (the clocks fall back) resolves to the first of the two.
 *
 * luxon supplies zone offsets only; the calendar math is plain UTC date arithmetic.
 */
import { DateTime, IANAZone } from 'luxon';

export interface LocalDate {
  year: number;
  /** 1–12 */
  month: number;
  day: number;
}

export interface LocalDateTime extends LocalDate {
  hour: number;
  minute: number;
  second: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

export function isValidZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

function zoneOf(name: string): IANAZone {
  const zone = IANAZone.create(name);
  if (!zone.isValid) throw new RangeError(`unknown time zone ${JSON.stringify(name)}`);
  return zone;
}

/** The wall-clock fields as if they were UTC, in ms (a handy number to do offset math on). */
function wallMs(t: LocalDateTime): number {
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
}

/**
 * The instant (ms) of a wall time in a zone: the first of two when the wall time is ambiguous, the
 * first instant after the gap when it does not exist.
 */
export function resolveLocal(t: LocalDateTime, zoneName: string): number {
  const zone = zoneOf(zoneName);
  const wall = wallMs(t);
  const offsetAt = (ms: number) => zone.offset(ms) * MINUTE_MS;
  // Offsets in force within a day either side cover every transition that could touch this wall time.
  const offsets = new Set([-DAY_MS, -12 * HOUR_MS, 0, 12 * HOUR_MS, DAY_MS].map((d) => offsetAt(wall + d)));
  const candidates = [...offsets].map((o) => wall - o);
  const valid = candidates.filter((i) => offsetAt(i) === wall - i);
  if (valid.length > 0) return Math.min(...valid);
  // In a gap: the smallest instant whose wall time is at or past the asked one is the transition.
  let lo = Math.min(...candidates);
  let hi = Math.max(...candidates);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid + offsetAt(mid) >= wall) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The wall-clock fields of an instant in a zone. */
export function localOf(ms: number, zoneName: string): LocalDateTime {
  const d = DateTime.fromMillis(ms, { zone: zoneOf(zoneName) });
  return { year: d.year, month: d.month, day: d.day, hour: d.hour, minute: d.minute, second: d.second };
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** 0 = Monday … 6 = Sunday (ISO order, as in `WEEKDAYS`). */
export function isoWeekday(d: LocalDate): number {
  return (new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay() + 6) % 7;
}

export function addDays(d: LocalDate, days: number): LocalDate {
  const x = new Date(Date.UTC(d.year, d.month - 1, d.day + days));
  return { year: x.getUTCFullYear(), month: x.getUTCMonth() + 1, day: x.getUTCDate() };
}

/** The month `months` after `d`'s, on `day` or that month's last day, whichever comes first. */
export function addMonthsClamped(d: LocalDate, months: number, day: number): LocalDate {
  const index = d.month - 1 + months;
  const year = d.year + Math.floor(index / 12);
  const month = (((index % 12) + 12) % 12) + 1;
  return { year, month, day: Math.min(day, daysInMonth(year, month)) };
}

export function sameDate(a: LocalDate, b: LocalDate): boolean {
  return a.year === b.year && a.month === b.month && a.day === b.day;
}

export function daysBetween(a: LocalDate, b: LocalDate): number {
  return Math.round((Date.UTC(b.year, b.month - 1, b.day) - Date.UTC(a.year, a.month - 1, a.day)) / DAY_MS);
}

const AT_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|z|[+-]\d{2}:?\d{2})?(?:\[([^\]\s]+)\])?$/;

export interface ParsedAt {
  /** The wall time as written (for a local `at`) or of the instant in `zone` (for an instant). */
  local: LocalDateTime;
  /** Set when `at` carried an offset: the exact instant. */
  instantMs?: number;
  /** The zone named in brackets, if any. */
  zone?: string;
  /** `at` without its bracket zone. */
  text: string;
}

/** Parses `at`; throws a RangeError that says what is wrong. */
export function parseAt(at: string): ParsedAt {
  const m = AT_RE.exec(at.trim());
  if (!m)
    throw new RangeError(
      `at ${JSON.stringify(at)} is not a date-time like 2026-10-12T08:00, 2026-10-12T06:00:00Z or 2026-10-12T08:00[Europe/Berlin]`,
    );
  const [, y, mo, d, h, mi, s, frac, offset, zone] = m;
  const local: LocalDateTime = { year: +y!, month: +mo!, day: +d!, hour: +h!, minute: +mi!, second: s ? +s : 0 };
  if (
    local.month < 1 ||
    local.month > 12 ||
    local.day < 1 ||
    local.day > daysInMonth(local.year, local.month) ||
    local.hour > 23 ||
    local.minute > 59 ||
    local.second > 59
  ) {
    throw new RangeError(`at ${JSON.stringify(at)} is not a real date-time`);
  }
  const text = at.trim().replace(/\[[^\]]*\]$/, '');
  const out: ParsedAt = { local, text };
  if (zone !== undefined) out.zone = zone;
  if (offset !== undefined) {
    const ms = Date.parse(
      `${y}-${mo}-${d}T${h}:${mi}:${s ?? '00'}${frac ?? ''}${offset.toUpperCase() === 'Z' ? 'Z' : offset.length === 5 ? `${offset.slice(0, 3)}:${offset.slice(3)}` : offset}`,
    );
    if (Number.isNaN(ms)) throw new RangeError(`at ${JSON.stringify(at)} has a bad offset`);
    out.instantMs = ms;
  }
  return out;
}
