/** How occurrences are named: in message ids (stable, machine-readable) and for people. */
import { DateTime } from 'luxon';

/** `20261012T060000Z`: the occurrence instant in UTC, to the second. */
export function occurrenceStamp(at: string | number): string {
  return new Date(at)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The message id of one occurrence: the same for every send of it (a resend after a crash or by the
 * other replica is the same task), distinct for every occurrence. At most 6 + 64 + 1 + 16 characters.
 */
export function occurrenceMessageId(scheduleId: string, at: string | number): string {
  return `sched-${scheduleId}-${occurrenceStamp(at)}`;
}

/** `Mon 12 Oct 2026 08:00 (Europe/Berlin)`: the wall time the owner asked for, in the schedule's zone. */
export function formatWallTime(at: string | number, zone: string): string {
  const d = DateTime.fromMillis(new Date(at).getTime(), { zone }).setLocale('en');
  const time = d.second ? d.toFormat('HH:mm:ss') : d.toFormat('HH:mm');
  return `${d.toFormat('ccc d LLL yyyy')} ${time} (${zone})`;
}

/** The worker's header line: `scheduled by laptop (laptop/webapp) for Mon 12 Oct 2026 08:00 (Europe/Berlin)`. */
export function scheduledByLine(owner: { device: string; from?: string | undefined }, at: string | number, zone: string): string {
  const who = owner.from ? `${owner.device} (${owner.from})` : owner.device;
  return `scheduled by ${who} for ${formatWallTime(at, zone)}`;
}
