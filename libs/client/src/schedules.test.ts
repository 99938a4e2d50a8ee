import { ShroomsError } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { describeSchedule, firstAt, type ScheduleView } from './schedules.js';

describe('firstAt', () => {
  const now = Date.parse('2026-12-04T10:00:00.250Z');

  it('passes a zoned `at` on as given (the scheduler reads its zone), and fills in what a local one leaves out', () => {
    expect(firstAt({ at: '2026-12-05T08:00[Europe/Berlin]' }, now)).toEqual({ at: '2026-12-05T08:00[Europe/Berlin]' });
    expect(firstAt({ at: '08:00', zone: 'Europe/Berlin' }, now)).toEqual({ at: '2026-12-05T08:00:00', zone: 'Europe/Berlin' });
  });

  it('makes `in` an instant from now, to the next whole second', () => {
    expect(firstAt({ in: '10m' }, now)).toEqual({ at: '2026-12-04T10:10:01Z' });
    expect(firstAt({ in: '1h30m', zone: 'Asia/Tokyo' }, Date.parse('2026-12-04T10:00:00Z'))).toEqual({
      at: '2026-12-04T11:30:00Z',
      zone: 'Asia/Tokyo',
    });
  });

  it.each([
    [{}, 'say when: at (a time) or in (a delay such as 10m)'],
    [{ at: '', in: undefined }, 'say when: at (a time) or in (a delay such as 10m)'],
    [{ at: '2026-12-05T08:00:00Z', in: '10m' }, 'say when with at or in, not both'],
    [{ in: 'soon' }, 'delay "soon": not a delay (try 90s, 10m, 2h, 1h30m, 3d)'],
  ])('refuses %j with INVALID_PARAMS', (when, message) => {
    let err: unknown;
    try {
      firstAt(when, now);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ShroomsError);
    expect(err).toMatchObject({ key: 'INVALID_PARAMS', message });
  });
});

describe('describeSchedule', () => {
  const base: ScheduleView = {
    id: 'a1b2c3',
    recipients: ['box/demo', 'box/ghost'],
    prompt: 'the weekly report',
    state: 'active',
    rule: { at: '2026-12-07T08:00', zone: 'Europe/Berlin', repeat: 'weekly:mon' },
    next: { at: '2026-12-14T07:00:00.000Z' },
  };

  it('is one line when nothing went wrong', () => {
    const line = describeSchedule({
      ...base,
      last: { occurrence: '2026-12-07T07:00:00.000Z', deliveries: [{ recipient: 'box/demo', outcome: 'sent', taskId: 'demo:s-1' }] },
    });
    expect(line).toBe(
      'a1b2c3 → box/demo, box/ghost: next 2026-12-14T07:00:00.000Z (Europe/Berlin, repeating weekly:mon) — "the weekly report"',
    );
  });

  it('names each recipient the last occurrence did not reach, and why', () => {
    const text = describeSchedule({
      ...base,
      state: 'done',
      next: null,
      last: {
        occurrence: '2026-12-07T07:00:00.000Z',
        deliveries: [
          { recipient: 'box/demo', outcome: 'existing', taskId: 'demo:s-1' },
          { recipient: 'box/ghost', outcome: 'refused', error: { key: 'SESSION_NOT_FOUND', message: 'no session box/ghost' } },
        ],
      },
    });
    expect(text.split('\n')).toEqual([
      'a1b2c3 → box/demo, box/ghost: done (Europe/Berlin, repeating weekly:mon) — "the weekly report"',
      '  occurrence 2026-12-07T07:00:00.000Z refused for box/ghost: no session box/ghost [SESSION_NOT_FOUND]',
    ]);
  });

  it('says an occurrence is being tried again, from when and why', () => {
    const text = describeSchedule({ ...base, retry: { attempts: 2, notBefore: '2026-12-14T07:00:04.000Z', error: 'BRIDGE_UNAVAILABLE' } });
    expect(text.split('\n')[1]).toBe('  trying again from 2026-12-14T07:00:04.000Z (attempt 3): BRIDGE_UNAVAILABLE');
  });

  it('writes a repeat as the scheduler stores it in its short form, and the next time as `when` shows it', () => {
    const stored = { ...base, rule: { ...base.rule, repeat: { freq: 'weekly', weekdays: ['mon', 'fri'], count: 3 } } };
    expect(describeSchedule(stored, { when: (at, zone) => `${at} in ${zone}` })).toBe(
      'a1b2c3 → box/demo, box/ghost: next 2026-12-14T07:00:00.000Z in Europe/Berlin (Europe/Berlin, repeating weekly:mon,fri;count=3) — "the weekly report"',
    );
  });

  it('cuts a long prompt to the length asked, marking the cut', () => {
    expect(describeSchedule({ ...base, prompt: 'x'.repeat(100) }, { promptMax: 10 })).toMatch(/ — "x{9}…"$/);
  });
});
