import { describe, expect, it } from 'vitest';
import { humanDuration } from './duration.js';

describe('a span of time as a person says it', () => {
  it('says seconds, then minutes, then hours to a tenth', () => {
    expect(humanDuration(0)).toBe('0 s');
    expect(humanDuration(89_400)).toBe('89 s');
    expect(humanDuration(90_000)).toBe('2 min');
    expect(humanDuration(89 * 60_000)).toBe('89 min');
    expect(humanDuration(150 * 60_000)).toBe('2.5 h');
  });
});
