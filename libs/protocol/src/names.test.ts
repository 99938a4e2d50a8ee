import { describe, expect, it } from 'vitest';
import { decodeToken, encodeToken, parseAgent, parseTaskName, formatTaskName } from './names.js';

describe('token encoding', () => {
  it('keeps letters, digits and dashes readable', () => {
    expect(encodeToken('web-app2')).toBe('web-app2');
  });

  it('escapes every character that means something in a subject', () => {
    for (const raw of ['a.b', 'a*b', 'a>b', 'a b', 'a\tb', '_', 'ä', '\u0000', '$JS']) {
      const enc = encodeToken(raw);
      expect(enc).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeToken(enc)).toBe(raw);
    }
    expect(encodeToken('my.session')).toBe('my_2Esession');
  });

  it('decodes a token with no escape to itself, and one that is not what encoding gives as before', () => {
    for (const t of ['web-app2', 'a-b-C9', '']) expect(decodeToken(t)).toBe(t);
    // Not produced by encodeToken: a non-ASCII character is read as one byte of its code, as always.
    expect(decodeToken('\u00e4')).toBe(Buffer.from([0xe4]).toString('utf8'));
    expect(() => decodeToken('a_zz')).toThrow(/bad escape/);
  });

  it('never maps two different inputs to the same token', () => {
    expect(encodeToken('a_2Eb')).not.toBe(encodeToken('a.b'));
  });
});

describe('names', () => {
  it('parses MACHINE/SESSION:ID with colons in the message id', () => {
    expect(parseTaskName('laptop/review:cli-1:x')).toEqual({ machine: 'laptop', session: 'review', messageId: 'cli-1:x' });
    expect(parseTaskName('review:m-1')).toEqual({ session: 'review', messageId: 'm-1' });
    expect(formatTaskName({ machine: 'pi5', session: 'jimmy', messageId: 'm' })).toBe('pi5/jimmy:m');
  });

  it('refuses names that are not names', () => {
    expect(parseTaskName('nocolon')).toBeUndefined();
    expect(parseTaskName(':id')).toBeUndefined();
    expect(parseAgent('a/b/c')).toBeUndefined();
    expect(parseAgent('has space')).toBeUndefined();
  });
});
