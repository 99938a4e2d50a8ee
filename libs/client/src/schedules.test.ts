import { ShroomsError } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { firstAt } from './schedules.js';

describe('firstAt', () => {
  const now = Date.parse('2026-12-04T10:00:00.250Z');

  it('passes an `at` on as given (the scheduler reads its zone)', () => {
    expect(firstAt({ at: '2026-12-05T08:00[Europe/Berlin]' }, now)).toBe('2026-12-05T08:00[Europe/Berlin]');
  });

  it('makes `in` an instant from now, to the next whole second', () => {
    expect(firstAt({ in: '10m' }, now)).toBe('2026-12-04T10:10:01Z');
    expect(firstAt({ in: '1h30m' }, Date.parse('2026-12-04T10:00:00Z'))).toBe('2026-12-04T11:30:00Z');
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
