/**
 * A schedule's time as a person (or a model on their machine) writes it: a local `at` is read in
 * this machine's zone unless `zone` names another (the scheduler needs a zone for a local time), and
 * `08:00` alone is the next 08:00 there (today while still ahead, else tomorrow). The scheduler
 * computes every occurrence; this only fills in the date and the zone left out. `Intl` is touched
 * only here, when a schedule is made (its time-zone data costs a process megabytes once loaded).
 */
import { ShroomsError } from '@shrooms/protocol';

/** This machine's IANA zone (TZ, else the system's), as Node reads it. */
export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

const TIME_OF_DAY = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;
/** A date-time with an offset (`Z`, `+02:00`) or a bracketed zone: an instant, or zoned already. */
const ZONED = /(?:[Zz]|[+-]\d{2}:?\d{2}|\])$/;

/** The wall date-time of `ms` in `zone`: `YYYY-MM-DDTHH:MM:SS`. */
export function wallClock(ms: number, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
}

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
  let today: string;
  try {
    today = wallClock(now, z);
  } catch {
    throw new ShroomsError('INVALID_PARAMS', `unknown time zone ${JSON.stringify(z)} (use an IANA name like Europe/Berlin)`);
  }
  const [date, nowTime] = today.split('T') as [string, string];
  // Still ahead today on the wall clock, else tomorrow (the date after today's, by the calendar).
  const day = time > nowTime ? date : nextDate(date);
  return { at: `${day}T${time}`, zone: z };
}

function nextDate(date: string): string {
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, mo - 1, d + 1)).toISOString().slice(0, 10);
}
