import { describe, expect, it } from 'vitest';
import { Ahead, GIVE_BACK_GRACE_MS, MOST_AHEAD, foreignPlacesPending, leaseMs } from './ahead.js';

const hour = { max: 30, windowMs: 60 * 60 * 1000 };

describe('places reserved ahead', () => {
  it('leases a tenth of the window, at most a second, and none for tiny windows', () => {
    expect(leaseMs(hour)).toBe(1_000);
    expect(leaseMs({ max: 5, windowMs: 100 })).toBe(10);
    expect(leaseMs({ max: 5, windowMs: 19 })).toBe(0);
  });

  it('reserves for admits that come within a lease, none for one now and then', () => {
    const a = new Ahead('me', hour);
    a.admitted(1, 0);
    expect(a.wanted(1, 0)).toBe(0);
    a.admitted(1, 5_000);
    expect(a.wanted(2, 5_000)).toBe(0);
    // A burst: the moving gap falls below the lease.
    for (let t = 5_001; t < 5_020; t++) a.admitted(1, t);
    expect(a.wanted(10, 5_020)).toBeGreaterThan(0);
    // Never more than a quarter of the room left, never the last places.
    expect(a.wanted(26, 5_020)).toBe(1);
    expect(a.wanted(27, 5_020)).toBe(0);
    // Admits stopped coming: nothing more is reserved.
    expect(a.wanted(10, 5_020 + leaseMs(hour) + 1)).toBe(0);
  });

  it('counts the admits a write carries into the rate only once the write is stored', () => {
    const a = new Ahead('me', hour);
    a.admitted(1, 0);
    // A write with one more admit 10 ms later would reserve (a quarter of the room: 7)...
    expect(a.wanted(1, 10, 1)).toBe(7);
    // ...and asking changes nothing: a write that lost its race asks again and gets the same.
    expect(a.wanted(1, 10, 1)).toBe(7);
    expect(a.wanted(1, 10)).toBe(0);
    a.admitted(1, 10);
    expect(a.wanted(1, 10)).toBe(7);
  });

  it('reserves at most MOST_AHEAD in one write', () => {
    const a = new Ahead('me', { max: 1_000, windowMs: 60 * 60 * 1000 });
    a.admitted(500, 0);
    expect(a.wanted(0, 0)).toBe(MOST_AHEAD);
  });

  it('gives each place once, only within its lease, and writes the task ids in their places', () => {
    const a = new Ahead('me', hour);
    const places = a.places(2, 0);
    a.written(places);
    expect(places.every((p) => p.at === 1_000)).toBe(true);
    expect(a.give('t1', 10)).toEqual(places[0]);
    expect(a.give('t2', 1_000)).toBeUndefined();
    const stored = [{ id: 'x', at: 5 }, ...places, { id: '~place:other:0', at: 900 }];
    // t1 in its place with the place's time; the place not given dropped; another store's kept.
    expect(a.settled(stored)).toEqual([
      { id: 'x', at: 5 },
      { id: 't1', at: 1_000 },
      { id: '~place:other:0', at: 900 },
    ]);
    expect(a.spare).toEqual([]);
  });

  it('adds a given task back when its place is gone (a reset emptied the window)', () => {
    const a = new Ahead('me', hour);
    const places = a.places(1, 0);
    a.written(places);
    a.give('t1', 1);
    expect(a.settled([])).toEqual([{ id: 't1', at: 1_000 }]);
    a.written([]);
    expect(a.settled([])).toEqual([]);
  });

  it("waits for another store's places until their lease and a grace have passed", () => {
    const mine = new Ahead('me', hour);
    const entries = [
      { id: '~place:me:0', at: 1_000 },
      { id: 't', at: 0 },
      { id: '~place:other:3', at: 2_000 },
    ];
    expect(foreignPlacesPending(entries, mine, 1_500)).toBe(2_000 + GIVE_BACK_GRACE_MS);
    expect(foreignPlacesPending(entries, mine, 2_000 + GIVE_BACK_GRACE_MS)).toBe(0);
    expect(foreignPlacesPending([{ id: 't', at: 0 }], mine, 0)).toBe(0);
  });
});
