import { describe, expect, it } from 'vitest';
import { toAgentInfo, type AgentInfo } from './agents.js';
import { whyQueued } from './queued.js';

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
