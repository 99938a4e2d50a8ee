import { describe, expect, it } from 'vitest';
import { createLogger } from '@shrooms/runtime';
import { OpenPrompts } from './prompts.js';
import type { HarnessState } from './types.js';

function prompts() {
  let state: HarnessState = 'busy';
  const seen: HarnessState[] = [];
  const open = new OpenPrompts<{ n: number }>(
    {
      get: () => state,
      // As the harness's setState: a change only.
      set: (s) => {
        if (s !== state) seen.push((state = s));
      },
    },
    () => createLogger('test', 'silent'),
  );
  return { open, seen, state: () => state };
}

describe('the open permission prompts', () => {
  it('make the turn wait until the last one is answered or withdrawn', () => {
    const { open, seen, state } = prompts();
    open.add('a', { n: 1 });
    open.add('b', { n: 2 });
    expect(state()).toBe('waiting');
    expect(open.turnState()).toBe('waiting');
    expect(open.close('a')).toBe(true);
    expect(state()).toBe('waiting');
    expect(open.close('b')).toBe(true);
    expect(state()).toBe('busy');
    expect(seen).toEqual(['waiting', 'busy']);
  });

  it('answer a prompt once: a second answer finds none and changes nothing', () => {
    const { open, seen } = prompts();
    open.add('a', { n: 1 });
    expect(open.get('a')).toEqual({ n: 1 });
    open.close('a');
    expect(open.get('a')).toBeUndefined();
    expect(open.close('a')).toBe(false);
    expect(seen).toEqual(['waiting', 'busy']);
  });
});
