import { describe, expect, it } from 'vitest';
import { decide, decodeWindow, encodeWindow, live, retryAfterMs } from './window.js';

const spec = { max: 3, windowMs: 1000 };

describe('sliding window', () => {
  it('adds a new id while there is room', () => {
    const d = decide([{ id: 'a', at: 10 }], 'b', spec, 20);
    expect(d).toEqual({
      kind: 'add',
      count: 2,
      next: [
        { id: 'a', at: 10 },
        { id: 'b', at: 20 },
      ],
    });
  });

  it('refuses the id past the maximum and says when the oldest leaves the window', () => {
    const entries = [
      { id: 'b', at: 300 },
      { id: 'a', at: 100 },
      { id: 'c', at: 500 },
    ];
    expect(decide(entries, 'd', spec, 600)).toEqual({ kind: 'full', count: 3, retryAfterMs: 500 });
  });

  it('does not count an id that is already in the window', () => {
    const entries = [
      { id: 'a', at: 100 },
      { id: 'b', at: 200 },
      { id: 'c', at: 300 },
    ];
    expect(decide(entries, 'b', spec, 400)).toEqual({ kind: 'present', count: 3 });
  });

  it('forgets entries once they are a whole window old', () => {
    const entries = [
      { id: 'a', at: 0 },
      { id: 'b', at: 1 },
      { id: 'c', at: 2 },
    ];
    expect(live(entries, 1000, 1000).map((e) => e.id)).toEqual(['b', 'c']);
    expect(decide(entries, 'd', spec, 1000).kind).toBe('add');
    expect(decide(entries, 'a', spec, 1000).kind).toBe('add');
  });

  it('never asks to retry in less than 1 ms', () => {
    expect(retryAfterMs([{ id: 'a', at: 0 }], 999.9, 1000)).toBe(1);
  });

  it('stores what JSON.stringify would, also for entries written before and ids that need escaping', () => {
    const a = { id: 'dev:s:1', at: 1 };
    const b = { id: 'dev:s:"quoted" \\ ünïcode\n', at: 2.5 };
    expect(encodeWindow([])).toBe(JSON.stringify({ v: 1, entries: [] }));
    expect(encodeWindow([a])).toBe(JSON.stringify({ v: 1, entries: [a] }));
    expect(encodeWindow([a, b])).toBe(JSON.stringify({ v: 1, entries: [a, b] }));
    expect(encodeWindow([b])).toBe(JSON.stringify({ v: 1, entries: [b] }));
    expect(decodeWindow(encodeWindow([a, b]))).toEqual([a, b]);
  });

  it('round-trips through its stored form and rejects anything else', () => {
    const entries = [{ id: 'x:y', at: 5 }];
    expect(decodeWindow(encodeWindow(entries))).toEqual(entries);
    expect(() => decodeWindow('{"entries":3}')).toThrow();
    expect(() => decodeWindow('not json')).toThrow();
  });
});
