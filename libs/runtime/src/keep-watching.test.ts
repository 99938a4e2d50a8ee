import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keepWatching, type OpenWatch } from './keep-watching.js';

/** The watches here are stand-ins, on a fake clock: what is tested is when they are started, ended and stopped. */
function watches(failStarts = 0) {
  const started: boolean[] = [];
  const enders: ((err?: unknown) => void)[] = [];
  let stops = 0;
  let failing = failStarts;
  const open: OpenWatch = async (ended, again) => {
    if (again && failing-- > 0) throw new Error('no consumer');
    started.push(again);
    enders.push(ended);
    return () => void stops++;
  };
  const lines: string[] = [];
  const log = { warn: (_o: unknown, m: string) => void lines.push(m), info: (_o: unknown, m: string) => void lines.push(m) };
  return { open, started, enders, lines, log, stops: () => stops };
}

/** Time passes on the fake clock (the promises that follow each timer settle too). */
const tick = (ms: number) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('keepWatching', () => {
  it('starts a watch that ended by itself again, and tells its owner once it is back', async () => {
    const w = watches();
    let back = 0;
    const stop = await keepWatching(w.open, { log: w.log, what: 'the watch', back: () => void back++, delayMs: 5 });
    w.enders[0]!(new Error('consumer deleted'));
    await tick(40);
    expect(w.started).toEqual([false, true]);
    expect(back).toBe(1);
    expect(w.lines).toEqual(['the watch ended; starting it again', 'the watch is back']);
    // An ended watch that says so twice starts one watch, not two.
    w.enders[0]!();
    await tick(20);
    expect(w.started).toEqual([false, true]);
    stop();
    expect(w.stops()).toBe(1);
  });

  it('keeps trying while the watch cannot start', async () => {
    const w = watches(3);
    const stop = await keepWatching(w.open, { log: w.log, what: 'the watch', delayMs: 5 });
    w.enders[0]!();
    await tick(80);
    expect(w.started).toEqual([false, true]);
    expect(w.lines.filter((l) => l === 'the watch could not start again; trying again')).toHaveLength(3);
    stop();
  });

  it('starts nothing more once stopped, even when the watch ends after', async () => {
    const w = watches();
    const stop = await keepWatching(w.open, { log: w.log, what: 'the watch', delayMs: 5 });
    stop();
    w.enders[0]!();
    await tick(20);
    expect([w.started, w.lines, w.stops()]).toEqual([[false], [], 1]);
  });

  it('stops a restart pending when stopped', async () => {
    const w = watches();
    const stop = await keepWatching(w.open, { log: w.log, what: 'the watch', delayMs: 20 });
    w.enders[0]!();
    stop();
    await tick(40);
    expect(w.started).toEqual([false]);
  });

  it('throws when the first start fails', async () => {
    const open: OpenWatch = async () => {
      throw new Error('no stream');
    };
    await expect(keepWatching(open, { log: { warn: () => {}, info: () => {} }, what: 'w' })).rejects.toThrow('no stream');
  });
});
