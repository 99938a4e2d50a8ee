/**
 * patches/zod@4.6.7.patch: `zod` no longer loads every locale with it (~0.8 MB of heap, ~2 MB RSS, in each
 * process) — messages stay English, and a locale is still there from `zod/locales`.
 */
import { describe, expect, it } from 'vitest';
import * as zod from 'zod';
import { z } from 'zod';

describe('zod as patched', () => {
  it('does not export the locales (so it does not load them)', () => {
    expect('locales' in zod).toBe(false);
    expect('locales' in zod.core).toBe(false);
  });

  it('still says what is wrong in English', () => {
    expect(z.string().safeParse(1).error?.issues[0]?.message).toBe('Invalid input: expected string, received number');
  });

  it('still has every locale under zod/locales', async () => {
    const locales = await import('zod/locales');
    expect(typeof locales.fr).toBe('function');
  });
});
