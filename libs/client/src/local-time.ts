/**
 * A schedule's time as a person (or a model on their machine) writes it: a local `at` is read in
 * this machine's zone unless `zone` names another (the scheduler needs a zone for a local time), and
 * `08:00` alone is the next 08:00 there (today while still ahead, else tomorrow). The scheduler
 * computes every occurrence; this only fills in the date and the zone left out, when a schedule is
 * made (a zone's data costs a process megabytes once loaded).
 */
import { readWallClock, ShroomsError, type WallClock } from '@shrooms/protocol';

/** This machine's IANA zone (TZ, else the system's), as Node reads it. */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

const TIME_OF_DAY = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;
/** A date-time with an offset (`Z`, `+02:00`) or a bracketed zone: an instant, or zoned already. */
const ZONED = /(?:[Zz]|[+-]\d{2}:?\d{2}|\])$/;

/**
 * What to ask the scheduler for: `at` with the date filled in for a time of day, and the zone a
 * local time is read in (`zone` as given, else this machine's). An instant or a zoned `at` passes
 * as written, with `zone` as given; a date-time that is not one is left for the scheduler to refuse.
 */
export function resolveAt(at: string, zone: string | undefined, now = Date.now()): { at: string; zone?: string } {
  const text = at.trim();
  if (ZONED.test(text)) return { at, ...(zone ? { zone } : {}) };
  const z = zone ?? localZone();
  const m = TIME_OF_DAY.exec(text);
  if (!m) return { at, zone: z };
  if (Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59)
    throw new ShroomsError('INVALID_PARAMS', `at ${JSON.stringify(at)} is not a time of day: 00:00 to 23:59`);
  const time = `${m[1]!.padStart(2, '0')}:${m[2]}:${m[3] ?? '00'}`;
  let today: WallClock;
  try {
    today = readWallClock(now, z);
  } catch {
    throw new ShroomsError('INVALID_PARAMS', `unknown time zone ${JSON.stringify(z)} (use an IANA name like Europe/Berlin)`);
  }
  const nowTime = [today.hour, today.minute, today.second].map(pad2).join(':');
  // Still ahead today on the wall clock, else tomorrow (the date after today's, by the calendar).
  const day = isoDate(today.year, today.month, today.day + (time > nowTime ? 0 : 1));
  return { at: `${day}T${time}`, zone: z };
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD` of a calendar date, a day past the month's end carried into the next. */
function isoDate(year: number, month: number, day: number): string {
  return new Date(Date.UTC(year, month - 1, day)).toISOString().slice(0, 10);
}
