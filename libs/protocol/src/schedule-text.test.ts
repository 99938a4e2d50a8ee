import { describe, expect, it } from 'vitest';
import { formatWallClock, MAX_DELAY_MS, parseDelay, readWallClock, scheduledByLine } from './schedule-text.js';

describe('parseDelay', () => {
  it.each([
    ['90s', 90_000],
    ['10m', 600_000],
    ['2h', 7_200_000],
    ['3d', 259_200_000],
    ['1h30m', 5_400_000],
    ['10 minutes', 600_000],
    [' 1 hour 5 min ', 3_900_000],
    ['2 DAYS', 172_800_000],
    ['366d', MAX_DELAY_MS],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDelay(text)).toBe(ms);
  });

  it.each([
    ['', /not a delay/],
    ['10', /not a delay/],
    ['m', /not a delay/],
    ['10m later', /not a delay/],
    ['10m 5 later', /unknown unit later/],
    ['10 parsecs', /unknown unit parsecs/],
    ['-5m', /not a delay/],
    ['1.5h', /not a delay/],
    ['0s', /more than nothing/],
    ['367d', /at most a year/],
    ['99999999999999999999d', /at most a year/],
  ])('refuses %j, saying why', (text, why) => {
    expect(() => parseDelay(text)).toThrow(RangeError);
    expect(() => parseDelay(text)).toThrow(why);
  });
});

describe('scheduledByLine', () => {
  const owner = { device: 'laptop', from: 'laptop/webapp' };

  it('names the owner and the wall time in the zone of the schedule', () => {
    expect(scheduledByLine(owner, '2026-10-12T06:00:00Z', 'Europe/Berlin')).toBe(
      'scheduled by laptop (laptop/webapp) for Mon 12 Oct 2026 08:00 (Europe/Berlin)',
    );
  });

  it('says an occurrence fired late was missed while the scheduler was down', () => {
    expect(scheduledByLine({ device: 'laptop' }, '2026-10-12T06:00:00Z', 'UTC', true)).toBe(
      'scheduled by laptop for Mon 12 Oct 2026 06:00 (UTC), sent late (missed while the scheduler was down)',
    );
  });
});

describe('the wall clock of an instant in a zone', () => {
  // 2026-12-07 09:30 UTC: 18:30 in Tokyo, 04:30 in New York.
  const now = Date.parse('2026-12-07T09:30:00Z');

  it('reads it as numbers, with the weekday', () => {
    expect(readWallClock(now, 'Asia/Tokyo')).toEqual({ year: 2026, month: 12, day: 7, hour: 18, minute: 30, second: 0, weekday: 'Mon' });
    expect(readWallClock('2026-12-31T23:00:05Z', 'Pacific/Kiritimati')).toMatchObject({
      year: 2027,
      month: 1,
      day: 1,
      hour: 13,
      second: 5,
    });
    expect(readWallClock(Date.parse('2026-12-07T00:00:00Z'), 'UTC').hour).toBe(0);
  });

  it('writes it for a person, seconds only when set', () => {
    expect(formatWallClock(now, 'America/New_York')).toBe('Mon 7 Dec 2026 04:30');
    expect(formatWallClock('2026-03-01T00:00:07Z', 'UTC')).toBe('Sun 1 Mar 2026 00:00:07');
  });

  it('refuses a zone Node does not know', () => {
    expect(() => readWallClock(now, 'Mars/Olympus')).toThrow(RangeError);
  });
});
