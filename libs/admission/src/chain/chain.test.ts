import { describe, expect, it } from 'vitest';
import { checkChain } from './chain.js';

const ask = (target: string, chain: string[], depth = chain.length) => {
  const [machine, session] = target.split('/') as [string, string];
  return { machine, session, chain, depth };
};

describe('checkChain', () => {
  it('admits a root task (depth 0, empty chain)', () => {
    expect(checkChain(ask('a/a', []), 3)).toBeUndefined();
  });

  it('admits a chain of depth 3 with no cycle', () => {
    expect(checkChain(ask('d/d', ['a/a', 'b/b', 'c/c']), 3)).toBeUndefined();
  });

  it('refuses a chain of depth 4 with no cycle with the depth code', () => {
    const err = checkChain(ask('e/e', ['a/a', 'b/b', 'c/c', 'd/d']), 3);
    expect(err?.key).toBe('CHAIN_TOO_DEEP');
    expect(err?.details).toMatchObject({ depth: 4, maxDepth: 3 });
  });

  it('refuses A→B→C→A at the fourth hop with the cycle code', () => {
    expect(checkChain(ask('m/b', ['m/a']), 3)).toBeUndefined();
    expect(checkChain(ask('m/c', ['m/a', 'm/b']), 3)).toBeUndefined();
    const err = checkChain(ask('m/a', ['m/a', 'm/b', 'm/c']), 3);
    expect(err?.key).toBe('CHAIN_CYCLE');
    expect(err?.details.session).toBe('m/a');
  });

  it('reports a cycle as a cycle even when it is also too deep', () => {
    expect(checkChain(ask('m/a', ['m/a', 'm/b', 'm/c', 'm/d']), 3)?.key).toBe('CHAIN_CYCLE');
  });

  it('refuses a chain that already names a session twice', () => {
    expect(checkChain(ask('m/z', ['m/a', 'm/b', 'm/a']), 5)?.key).toBe('CHAIN_CYCLE');
  });

  it('takes the larger of the claimed depth and the chain length', () => {
    expect(checkChain(ask('m/z', [], 4), 3)?.key).toBe('CHAIN_TOO_DEEP');
    expect(checkChain(ask('m/z', ['a/a', 'b/b', 'c/c', 'd/d'], 0), 3)?.key).toBe('CHAIN_TOO_DEEP');
  });

  it('treats the same session on another machine as another session', () => {
    expect(checkChain(ask('laptop/review', ['pi5/review']), 3)).toBeUndefined();
  });

  it('treats a chain link without a machine as the target when the session names match', () => {
    expect(checkChain(ask('laptop/review', ['review']), 3)?.key).toBe('CHAIN_CYCLE');
  });

  it('honours a configured maximum of 0 (only root tasks)', () => {
    expect(checkChain(ask('m/b', ['m/a']), 0)?.key).toBe('CHAIN_TOO_DEEP');
  });
});
