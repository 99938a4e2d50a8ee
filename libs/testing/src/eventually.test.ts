import { describe, expect, it } from 'vitest';
import { eventually } from './processes.js';

describe('eventually', () => {
  it('returns the first truthy answer, past errors and falsy ones', async () => {
    let n = 0;
    const v = await eventually(
      () => {
        n += 1;
        if (n === 1) throw new Error('not yet');
        return n === 2 ? false : n;
      },
      5_000,
      1,
    );
    expect(v).toBe(3);
  });

  it('names the last error when the condition never holds', async () => {
    await expect(
      eventually(
        () => {
          throw new Error('still down');
        },
        100,
        5,
      ),
    ).rejects.toThrow(/^condition not met within 100 ms: still down$/);
  });

  it('does not wait past its deadline on a check that never returns, and says so', async () => {
    const never = () => new Promise<boolean>(() => {});
    await expect(eventually(never, 150, 5)).rejects.toThrow(/^condition not met within 150 ms: the check had not returned after \d+ ms$/);
  });
});
