import { describe, expect, it } from 'vitest';
import { formatRepeat, parseRepeat, RepeatSyntaxError } from '@shrooms/protocol';
import { parseAt } from './time.js';

describe('parseRepeat', () => {
  it.each([
    ['daily', { freq: 'daily' }],
    ['weekly', { freq: 'weekly' }],
    ['weekly:mon,thu', { freq: 'weekly', weekdays: ['mon', 'thu'] }],
    ['Weekly:Monday', { freq: 'weekly', weekdays: ['mon'] }],
    ['monthly:31', { freq: 'monthly', day: 31 }],
    ['yearly', { freq: 'yearly' }],
    ['every 15m', { freq: 'interval', every: 15, unit: 'minutes' }],
    ['every 2 hours', { freq: 'interval', every: 2, unit: 'hours' }],
    ['every day', { freq: 'interval', every: 1, unit: 'days' }],
    ['every 30s;count=4', { freq: 'interval', every: 30, unit: 'seconds', count: 4 }],
    ['weekly:mon until=2026-12-31T23:00:00Z', { freq: 'weekly', weekdays: ['mon'], until: '2026-12-31T23:00:00Z' }],
  ])('reads %s', (text, expected) => {
    expect(parseRepeat(text)).toEqual(expected);
  });

  it('round-trips through formatRepeat', () => {
    for (const text of ['weekly:mon,thu;count=3', 'monthly:31', 'every 15m;until=2026-12-31T23:00:00Z', 'yearly'])
      expect(formatRepeat(parseRepeat(text))).toBe(text);
  });

  it('accepts the object form', () => {
    expect(parseRepeat({ freq: 'monthly', day: 31, count: 2 })).toEqual({ freq: 'monthly', day: 31, count: 2 });
  });

  it.each(['hourly', 'weekly:funday', 'every 5 fortnights', 'monthly:x', 'daily;count=-1', { freq: 'daily', extra: 1 }])(
    'refuses %j with RepeatSyntaxError',
    (bad) => {
      expect(() => parseRepeat(bad)).toThrow(RepeatSyntaxError);
    },
  );
});

describe('parseAt', () => {
  it('reads a local time, an instant and a bracket zone', () => {
    expect(parseAt('2026-10-12T08:00')).toMatchObject({
      local: { year: 2026, month: 10, day: 12, hour: 8, minute: 0, second: 0 },
      text: '2026-10-12T08:00',
    });
    expect(parseAt('2026-10-12T06:00:00Z').instantMs).toBe(Date.UTC(2026, 9, 12, 6));
    expect(parseAt('2026-10-12T08:00:00+0200').instantMs).toBe(Date.UTC(2026, 9, 12, 6));
    expect(parseAt('2026-10-12T08:00[Europe/Berlin]')).toMatchObject({ zone: 'Europe/Berlin', text: '2026-10-12T08:00' });
  });

  it('refuses text that is not a date-time', () => {
    expect(() => parseAt('tomorrow at 8')).toThrow(RangeError);
    expect(() => parseAt('2026-13-01T08:00')).toThrow(RangeError);
  });
});
