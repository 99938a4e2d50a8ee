import { afterEach, describe, expect, it, vi } from 'vitest';
import { toAgentInfo, type AgentInfo } from './agents.js';
import { watchQueued, whyQueued } from './queued.js';
import type { TaskSummary } from './summary.js';

const queued = { task: 'home/review:m-2', agent: 'home/review', status: 'queued' };
const review = (signal: Record<string, unknown>): AgentInfo =>
  toAgentInfo({ machine: 'home', session: 'review', harness: 'pi', at: new Date().toISOString(), ttlMs: 30_000, ...signal })!;

describe('what a queued task waits for', () => {
  it('names the task its worker is on, and how many wait when others do', () => {
    expect(whyQueued(queued, [review({ state: 'working', task: 'review:m-1', queuedTasks: 1 })])).toBe(
      'home/review works on home/review:m-1',
    );
    expect(whyQueued(queued, [review({ state: 'waiting', task: 'review:m-1', queuedTasks: 3 })])).toBe(
      'home/review works on home/review:m-1; 3 tasks wait in its queue',
    );
  });

  it('says when no bridge serves the session: gone from the field, or stopped', () => {
    const none = 'no bridge serves home/review: the task waits in its queue until one starts';
    expect(whyQueued(queued, [])).toBe(none);
    expect(whyQueued(queued, [review({ state: 'stopped', queuedTasks: 1 })])).toBe(none);
    expect(whyQueued(queued, [toAgentInfo({ machine: 'pi5', session: 'review', at: '', ttlMs: 1 })!])).toBe(none);
  });

  it("tells a turn of the session's own, a prompt and a start apart", () => {
    expect(whyQueued(queued, [review({ state: 'working', queuedTasks: 1 })])).toBe('home/review is in a turn of its own');
    expect(whyQueued(queued, [review({ state: 'waiting', queuedTasks: 2 })])).toBe(
      'home/review has a permission prompt open; 2 tasks wait in its queue',
    );
    expect(whyQueued(queued, [review({ state: 'starting' })])).toBe('home/review is starting');
  });

  it('says nothing of an idle session with this task alone, nor of a task that is not queued', () => {
    expect(whyQueued(queued, [review({ state: 'idle', queuedTasks: 1 })])).toBeUndefined();
    expect(whyQueued(queued, [review({ state: 'idle', queuedTasks: 2 })])).toBe('2 tasks wait in the queue of home/review');
    expect(whyQueued({ ...queued, status: 'working' }, [])).toBeUndefined();
    expect(whyQueued(queued, [review({ state: 'working', task: 'review:m-2' })])).toBeUndefined(); // being taken up
  });
});

describe('keeping what a queued task waits for fresh', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const summary = (status: string): TaskSummary => ({ ...queued, status }) as TaskSummary;
  const settle = () => vi.advanceTimersByTimeAsync(0);

  it('reads when the task is queued and again every interval while it stays so', async () => {
    vi.useFakeTimers();
    let reads = 0;
    const heard: string[] = [];
    const w = watchQueued(
      async (s) => ({ ...s, note: `read ${++reads}` }),
      10_000,
      (e) => heard.push(e.note!),
    );
    w.update(summary('queued'));
    await settle();
    expect(heard).toEqual(['read 1']);
    await vi.advanceTimersByTimeAsync(25_000);
    expect(heard).toEqual(['read 1', 'read 2', 'read 3']);
    // Working now: no more reads, however long the wait goes on.
    w.update(summary('working'));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(reads).toBe(3);
    w.stop();
  });

  it('drops an answer about a state that is no longer the newest, and every answer after stop', async () => {
    vi.useFakeTimers();
    const answers: Array<(s: TaskSummary) => void> = [];
    const heard: TaskSummary[] = [];
    const w = watchQueued(
      (s) => new Promise<TaskSummary>((resolve) => answers.push(() => resolve({ ...s, note: 'late' }))),
      10_000,
      (e) => heard.push(e),
    );
    const first = summary('queued');
    w.update(first);
    w.update(summary('working'));
    answers[0]!(first);
    await settle();
    expect(heard).toEqual([]);
    const again = summary('queued');
    w.update(again);
    w.stop();
    answers[1]!(again);
    await settle();
    expect(heard).toEqual([]);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(answers).toHaveLength(2);
  });
});
