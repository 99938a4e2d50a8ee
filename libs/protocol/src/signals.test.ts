import { describe, expect, it } from 'vitest';
import { signalFreshness } from './signals.js';

describe('signalFreshness', () => {
  const at = '2026-12-01T12:00:00.000Z';
  const t = Date.parse(at);

  it('is full strength when just renewed and falls towards 0 at its ttl', () => {
    expect(signalFreshness({ at, ttlMs: 30_000 }, t)).toEqual({ ageMs: 0, strength: 1 });
    expect(signalFreshness({ at, ttlMs: 30_000 }, t + 15_000)).toEqual({ ageMs: 15_000, strength: 0.5 });
  });

  it('is faded (undefined) at its ttl and when its time cannot be read', () => {
    expect(signalFreshness({ at, ttlMs: 30_000 }, t + 30_000)).toBeUndefined();
    expect(signalFreshness({ at: 'yesterday-ish', ttlMs: 30_000 }, t)).toBeUndefined();
  });
});
