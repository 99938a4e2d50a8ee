import { describe, expect, it } from 'vitest';
import { resolveAt } from './local-time.js';

// 2026-12-07 09:30 UTC: 10:30 in Berlin, 18:30 in Tokyo.
const now = Date.parse('2026-12-07T09:30:00Z');

describe('a time as a person writes it', () => {
  it('makes a time of day the next one in the zone: today while ahead, else tomorrow', () => {
    expect(resolveAt('11:00', 'Europe/Berlin', now)).toEqual({ at: '2026-12-07T11:00:00', zone: 'Europe/Berlin' });
    expect(resolveAt('10:30', 'Europe/Berlin', now)).toEqual({ at: '2026-12-08T10:30:00', zone: 'Europe/Berlin' });
    expect(resolveAt('9:15', 'Europe/Berlin', now)).toEqual({ at: '2026-12-08T09:15:00', zone: 'Europe/Berlin' });
    expect(resolveAt('18:30:01', 'Asia/Tokyo', now)).toEqual({ at: '2026-12-07T18:30:01', zone: 'Asia/Tokyo' });
    // The date by the zone's calendar, across a month's and a year's end.
    expect(resolveAt('08:00', 'UTC', Date.parse('2026-12-31T23:00:00Z'))).toEqual({ at: '2027-01-01T08:00:00', zone: 'UTC' });
  });

  it("reads a local date-time in this machine's zone unless --zone names one, and leaves zoned ones alone", () => {
    const machine = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(resolveAt('2026-12-09T08:00', undefined, now)).toEqual({ at: '2026-12-09T08:00', zone: machine });
    expect(resolveAt('07:00', undefined, now).zone).toBe(machine);
    expect(resolveAt('2026-12-09T08:00', 'Asia/Tokyo', now)).toEqual({ at: '2026-12-09T08:00', zone: 'Asia/Tokyo' });
    expect(resolveAt('2026-12-09T08:00:00Z', undefined, now)).toEqual({ at: '2026-12-09T08:00:00Z' });
    expect(resolveAt('2026-12-09T08:00:00+02:00', 'Europe/Berlin', now)).toEqual({
      at: '2026-12-09T08:00:00+02:00',
      zone: 'Europe/Berlin',
    });
    expect(resolveAt('2026-12-09T08:00[Europe/Paris]', undefined, now)).toEqual({ at: '2026-12-09T08:00[Europe/Paris]' });
  });

  it('refuses a time of day that is none, naming what was typed', () => {
    expect(() => resolveAt('25:00', 'UTC', now)).toThrow('at "25:00" is not a time of day: 00:00 to 23:59');
    expect(() => resolveAt('12:60', 'UTC', now)).toThrow(/is not a time of day/);
    // In the scheduler's words, as a local date-time in that zone is refused there.
    expect(() => resolveAt('08:00', 'Mars/Olympus', now)).toThrow('unknown time zone "Mars/Olympus" (use an IANA name like Europe/Berlin)');
  });
});
