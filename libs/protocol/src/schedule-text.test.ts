import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS, parseDelay, scheduledByLine } from './schedule-text.js';

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
