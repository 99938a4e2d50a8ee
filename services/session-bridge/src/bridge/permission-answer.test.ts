import { describe, expect, it } from 'vitest';
import { parsePermissionAnswer } from './permission-answer.js';

const text = (t: string) => ({ parts: [{ text: t }] });

describe('parsePermissionAnswer', () => {
  it('reads exactly allow or deny, in any case, blanks aside', () => {
    for (const t of ['allow', 'Allow', ' ALLOW \n']) expect(parsePermissionAnswer(text(t)), t).toBe('allow');
    for (const t of ['deny', 'Deny', '  deny']) expect(parsePermissionAnswer(text(t)), t).toBe('deny');
  });

  it('reads a data part {answer} or a bare string', () => {
    expect(parsePermissionAnswer({ parts: [{ data: { answer: 'allow' } }] })).toBe('allow');
    expect(parsePermissionAnswer({ parts: [{ data: 'deny' }] })).toBe('deny');
    expect(parsePermissionAnswer({ parts: [{ data: { answer: 'allow', also: 1 } }] })).toBeUndefined();
  });

  it('takes anything else as no answer, so the prompt is asked again', () => {
    for (const t of ['go away', 'go', 'yes', 'y', 'ok', 'allow it', 'allowed', "don't allow", 'no', '', '   ', 'allow deny'])
      expect(parsePermissionAnswer(text(t)), t).toBeUndefined();
    expect(parsePermissionAnswer({ parts: [{ text: 'allow' }, { text: 'deny' }] })).toBeUndefined();
  });
});
