import { describe, expect, it } from 'vitest';
import {
  compileRule,
  firstOccurrence,
  lastOccurrenceBefore,
  nextOccurrence,
  occurrenceAtOrAfter,
  occurrences,
  RuleError,
} from './occurrences.js';
import type { Repeat } from '@shrooms/protocol';

const at = (rule: { at: string; zone: string; repeat?: Repeat }, n: number) => occurrences(compileRule(rule), n).map((o) => o.at);

describe('daylight-saving changes', () => {
  it('keeps 08:00 at 08:00 in Europe/Berlin across the spring-forward night', () => {
    expect(at({ at: '2026-03-28T08:00', zone: 'Europe/Berlin', repeat: { freq: 'daily' } }, 3)).toEqual([
      '2026-03-28T07:00:00.000Z',
      '2026-03-29T06:00:00.000Z',
      '2026-03-30T06:00:00.000Z',
    ]);
  });

  it('fires a wall time that does not exist in Europe/Berlin at the moment the clocks jump', () => {
    expect(at({ at: '2026-03-28T02:30', zone: 'Europe/Berlin', repeat: { freq: 'daily' } }, 3)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST, the first valid instant after
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('fires an ambiguous wall time in Europe/Berlin once, at the first of the two', () => {
    expect(at({ at: '2026-10-24T02:30', zone: 'Europe/Berlin', repeat: { freq: 'daily' } }, 3)).toEqual([
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST (02:30 CET an hour later is not a second occurrence)
      '2026-10-26T01:30:00.000Z', // 02:30 CET
    ]);
  });

  it('fires a wall time that does not exist in America/New_York at the moment the clocks jump', () => {
    expect(at({ at: '2026-03-07T02:30', zone: 'America/New_York', repeat: { freq: 'daily' } }, 3)).toEqual([
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:00:00.000Z', // 03:00 EDT
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  it('fires an ambiguous wall time in America/New_York once, at the first of the two', () => {
    expect(at({ at: '2026-10-31T01:30', zone: 'America/New_York', repeat: { freq: 'daily' } }, 3)).toEqual([
      '2026-10-31T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T05:30:00.000Z', // 01:30 EDT, the first of two
      '2026-11-02T06:30:00.000Z', // 01:30 EST
    ]);
  });

  it('keeps a weekly Monday 08:00 in America/New_York at 08:00 across both changes', () => {
    expect(at({ at: '2026-03-02T08:00', zone: 'America/New_York', repeat: { freq: 'weekly' } }, 2)).toEqual([
      '2026-03-02T13:00:00.000Z',
      '2026-03-09T12:00:00.000Z',
    ]);
    expect(at({ at: '2026-10-26T08:00', zone: 'America/New_York', repeat: { freq: 'weekly', weekdays: ['mon'] } }, 2)).toEqual([
      '2026-10-26T12:00:00.000Z',
      '2026-11-02T13:00:00.000Z',
    ]);
  });

  it('resolves a one-shot local time inside the gap to the moment the clocks jump', () => {
    expect(at({ at: '2026-03-29T02:30', zone: 'Europe/Berlin' }, 5)).toEqual(['2026-03-29T01:00:00.000Z']);
  });

  it('starts at an instant given as the second of two ambiguous ones, then keeps its wall time', () => {
    expect(at({ at: '2026-10-25T01:30:00Z', zone: 'Europe/Berlin', repeat: { freq: 'daily' } }, 2)).toEqual([
      '2026-10-25T01:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('counts every N hours in elapsed time, not wall time, across a change', () => {
    expect(at({ at: '2026-03-29T00:30', zone: 'Europe/Berlin', repeat: { freq: 'interval', every: 1, unit: 'hours' } }, 3)).toEqual([
      '2026-03-28T23:30:00.000Z',
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T01:30:00.000Z',
    ]);
  });

  it('counts every N days in calendar days at the same wall time across a change', () => {
    expect(at({ at: '2026-03-27T08:00', zone: 'Europe/Berlin', repeat: { freq: 'interval', every: 2, unit: 'days' } }, 3)).toEqual([
      '2026-03-27T07:00:00.000Z',
      '2026-03-29T06:00:00.000Z',
      '2026-03-31T06:00:00.000Z',
    ]);
  });
});

describe('month ends', () => {
  it('fires a monthly rule on the 31st on the last day of shorter months, then on the 31st again', () => {
    expect(at({ at: '2026-01-31T09:00', zone: 'UTC', repeat: { freq: 'monthly' } }, 5)).toEqual([
      '2026-01-31T09:00:00.000Z',
      '2026-02-28T09:00:00.000Z',
      '2026-03-31T09:00:00.000Z',
      '2026-04-30T09:00:00.000Z',
      '2026-05-31T09:00:00.000Z',
    ]);
  });

  it('falls on February 29th for the 31st in a leap year', () => {
    expect(at({ at: '2028-01-31T09:00', zone: 'UTC', repeat: { freq: 'monthly' } }, 2)[1]).toBe('2028-02-29T09:00:00.000Z');
  });

  it('starts a monthly rule with an explicit day at the first such day on or after at', () => {
    expect(at({ at: '2026-01-15T09:00', zone: 'Europe/Berlin', repeat: { freq: 'monthly', day: 31 } }, 3)).toEqual([
      '2026-01-31T08:00:00.000Z',
      '2026-02-28T08:00:00.000Z',
      '2026-03-31T07:00:00.000Z',
    ]);
    expect(at({ at: '2026-01-15T09:00', zone: 'UTC', repeat: { freq: 'monthly', day: 10 } }, 1)).toEqual(['2026-02-10T09:00:00.000Z']);
  });

  it('fires a yearly rule on February 29th on February 28th in other years', () => {
    expect(at({ at: '2028-02-29T10:00', zone: 'UTC', repeat: { freq: 'yearly' } }, 5)).toEqual([
      '2028-02-29T10:00:00.000Z',
      '2029-02-28T10:00:00.000Z',
      '2030-02-28T10:00:00.000Z',
      '2031-02-28T10:00:00.000Z',
      '2032-02-29T10:00:00.000Z',
    ]);
  });
});

describe('until, count, weekdays, intervals', () => {
  it('includes an occurrence that falls exactly on until', () => {
    expect(at({ at: '2026-05-01T08:00', zone: 'UTC', repeat: { freq: 'daily', until: '2026-05-03T08:00:00Z' } }, 10)).toHaveLength(3);
  });

  it('stops before until when the next occurrence is later than until', () => {
    expect(at({ at: '2026-05-01T08:00', zone: 'UTC', repeat: { freq: 'daily', until: '2026-05-03T07:59:59Z' } }, 10)).toHaveLength(2);
  });

  it('stops after count occurrences', () => {
    expect(at({ at: '2026-05-01T08:00', zone: 'UTC', repeat: { freq: 'interval', every: 15, unit: 'minutes', count: 3 } }, 10)).toEqual([
      '2026-05-01T08:00:00.000Z',
      '2026-05-01T08:15:00.000Z',
      '2026-05-01T08:30:00.000Z',
    ]);
  });

  it('fires every N seconds', () => {
    expect(at({ at: '2026-05-01T08:00:00Z', zone: 'UTC', repeat: { freq: 'interval', every: 5, unit: 'seconds', count: 3 } }, 10)).toEqual([
      '2026-05-01T08:00:00.000Z',
      '2026-05-01T08:00:05.000Z',
      '2026-05-01T08:00:10.000Z',
    ]);
  });

  it('fires on the weekdays asked for, starting with the first one on or after at', () => {
    // 2026-05-06 is a Wednesday
    expect(at({ at: '2026-05-06T08:00', zone: 'UTC', repeat: { freq: 'weekly', weekdays: ['mon', 'thu'] } }, 3)).toEqual([
      '2026-05-07T08:00:00.000Z',
      '2026-05-11T08:00:00.000Z',
      '2026-05-14T08:00:00.000Z',
    ]);
  });

  it('fires a one-shot rule once', () => {
    const cr = compileRule({ at: '2026-05-06T08:00:00+02:00', zone: 'Europe/Berlin' });
    const first = firstOccurrence(cr)!;
    expect(first.at).toBe('2026-05-06T06:00:00.000Z');
    expect(nextOccurrence(cr, first)).toBeNull();
  });

  it('refuses an unknown zone, a bad date and an until before the start with RuleError', () => {
    expect(() => compileRule({ at: '2026-05-06T08:00', zone: 'Mars/Olympus' })).toThrow(RuleError);
    expect(() => compileRule({ at: '2026-02-30T08:00', zone: 'UTC' })).toThrow(RuleError);
    expect(() => compileRule({ at: '2026-05-06T08:00', zone: 'UTC', repeat: { freq: 'daily', until: '2026-05-01T00:00:00Z' } })).toThrow(
      RuleError,
    );
  });
});

describe('jumping over downtime', () => {
  const rules: { at: string; zone: string; repeat: Repeat }[] = [
    { at: '2026-01-31T02:30', zone: 'Europe/Berlin', repeat: { freq: 'daily' } },
    { at: '2026-01-05T08:00', zone: 'America/New_York', repeat: { freq: 'weekly', weekdays: ['mon', 'fri'] } },
    { at: '2026-01-31T09:00', zone: 'Europe/Berlin', repeat: { freq: 'monthly' } },
    { at: '2028-02-29T10:00', zone: 'UTC', repeat: { freq: 'yearly' } },
    { at: '2026-01-01T00:00', zone: 'UTC', repeat: { freq: 'interval', every: 7, unit: 'minutes' } },
    { at: '2026-01-01T08:00', zone: 'Europe/Berlin', repeat: { freq: 'interval', every: 3, unit: 'days' } },
    { at: '2026-01-01T08:00', zone: 'UTC', repeat: { freq: 'daily', count: 40 } },
  ];

  it.each(rules)('finds the same first-at-or-after and last-before as stepping one by one ($repeat.freq)', (rule) => {
    const cr = compileRule(rule);
    const all = occurrences(cr, 401);
    const first = all[0]!;
    for (const probe of [all[3], all[17], all[39], all[all.length - 2]].filter((o) => o !== undefined)) {
      const t = Date.parse(probe.at) + 1;
      const after = occurrenceAtOrAfter(cr, t, first);
      const expected = all.find((o) => Date.parse(o.at) >= t);
      expect(after?.at).toBe(expected?.at);
      const before = lastOccurrenceBefore(cr, t, first);
      expect(before.at).toBe(probe.at);
      if (rule.repeat.count !== undefined || rule.repeat.freq === 'interval' || rule.repeat.freq === 'monthly')
        expect(before.seq).toBe(all.indexOf(probe));
    }
  });
});
