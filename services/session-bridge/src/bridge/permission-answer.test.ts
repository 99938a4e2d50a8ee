import { describe, expect, it } from 'vitest';
import { parsePermissionAnswer } from './permission-answer.js';

describe('parsePermissionAnswer', () => {
  it('allows an answer that starts with a yes-word, in any case', () => {
    for (const t of ['allow', 'Allow', ' yes please', 'y', 'OK', 'okay', 'approve', 'approved', 'go ahead', 'allowed'])
      expect(parsePermissionAnswer(t), t).toBe('allow');
  });

  it('denies "deny", "no" and anything else', () => {
    for (const t of ['deny', 'no', 'not now', '', '   ', 'maybe allow', 'nope']) expect(parsePermissionAnswer(t), t).toBe('deny');
  });

  it('reads only whole words: "yesterday" and "gone" are not yes', () => {
    expect(parsePermissionAnswer('yesterday')).toBe('deny');
    expect(parsePermissionAnswer('gone')).toBe('deny');
  });
});
