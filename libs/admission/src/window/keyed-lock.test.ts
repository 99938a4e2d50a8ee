import { describe, expect, it } from 'vitest';
import { keyedLock } from './keyed-lock.js';

describe('keyedLock', () => {
  it('runs work for one key one at a time, in order', async () => {
    const withKey = keyedLock();
    const log: string[] = [];
    const step = (name: string) =>
      withKey('k', async () => {
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, 5));
        log.push(`end ${name}`);
      });
    await Promise.all([step('a'), step('b'), step('c')]);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('lets different keys run side by side', async () => {
    const withKey = keyedLock();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const a = withKey('a', async () => {
      log.push('a waits');
      await gate;
      log.push('a done');
    });
    await withKey('b', async () => {
      log.push('b runs');
    });
    release();
    await a;
    expect(log).toEqual(['a waits', 'b runs', 'a done']);
  });

  it('keeps going after a failed piece of work', async () => {
    const withKey = keyedLock();
    await expect(withKey('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(withKey('k', async () => 7)).resolves.toBe(7);
  });
});
