import { ShroomsError, type StreamResponse, type Task, type TaskState } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { GatewayUnreachableError } from './errors.js';
import { waitForTask, type WaitPort } from './wait.js';

const task = (state: TaskState, text?: string): Task => ({
  id: 's:m',
  contextId: 'c',
  status: { state, ...(text ? { message: { messageId: 'x', role: 'ROLE_AGENT', parts: [{ text }] } } : {}) },
});

function port(states: TaskState[][], final: () => Task): WaitPort & { subscribes: number } {
  const p = {
    subscribes: 0,
    get: async () => final(),
    subscribe(signal: AbortSignal): AsyncIterable<StreamResponse> {
      const batch = states[p.subscribes++] ?? [];
      return {
        async *[Symbol.asyncIterator]() {
          for (const s of batch) yield { statusUpdate: { taskId: 's:m', contextId: 'c', status: { state: s } } };
          if (batch.length === 0) await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
        },
      };
    },
  };
  return p;
}

describe('following a task', () => {
  it('settles when the stream shows a finished task and reads the whole task at the end', async () => {
    const seen: string[] = [];
    const p = port([['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']], () => task('TASK_STATE_COMPLETED', 'done'));
    const r = await waitForTask(p, { onUpdate: (t) => seen.push(t.status.state) }, task('TASK_STATE_SUBMITTED'));
    expect(r.settled).toBe(true);
    expect(r.task.status.message?.parts[0]?.text).toBe('done');
    expect(seen).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
  });

  it('opens the stream again when it drops with the task still open', async () => {
    let finished = false;
    const p = port([['TASK_STATE_WORKING'], ['TASK_STATE_INPUT_REQUIRED']], () =>
      task(finished ? 'TASK_STATE_INPUT_REQUIRED' : 'TASK_STATE_WORKING'),
    );
    const r = await waitForTask(
      p,
      { retryMs: 1, onUpdate: (t) => (finished ||= t.status.state === 'TASK_STATE_INPUT_REQUIRED') },
      task('TASK_STATE_SUBMITTED'),
    );
    expect(p.subscribes).toBe(2);
    expect(r.settled).toBe(true);
    expect(r.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('returns the task as it stands when the wait ends first', async () => {
    const p = port([[]], () => task('TASK_STATE_SUBMITTED'));
    const r = await waitForTask(p, { timeoutMs: 50 }, task('TASK_STATE_SUBMITTED'));
    expect(r.settled).toBe(false);
    expect(r.task.status.state).toBe('TASK_STATE_SUBMITTED');
  });

  it('stops when the caller aborts', async () => {
    const ac = new AbortController();
    const p = port([[]], () => task('TASK_STATE_WORKING'));
    setTimeout(() => ac.abort(), 20);
    const r = await waitForTask(p, { signal: ac.signal }, task('TASK_STATE_WORKING'));
    expect(r.settled).toBe(false);
  });

  /** A stand-in transport for a gateway that is away: every stream drops at once; `get` as given. */
  const away = (get: () => Task): WaitPort => ({
    get: async () => get(),
    subscribe: () => ({ async *[Symbol.asyncIterator]() {} }),
  });

  it('keeps reading the task while the gateway does not answer, then follows it to the end', async () => {
    let reads = 0;
    const p = away(() => {
      reads++;
      if (reads <= 3) throw new GatewayUnreachableError('http://gw');
      return task(reads >= 5 ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_WORKING');
    });
    const r = await waitForTask(p, { retryMs: 1 }, task('TASK_STATE_WORKING'));
    expect(reads).toBe(6);
    expect(r.settled).toBe(true);
    expect(r.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('returns the task as last seen when the gateway stays away until the deadline', async () => {
    const p = away(() => {
      throw new ShroomsError('NATS_UNAVAILABLE', 'NATS is away');
    });
    const r = await waitForTask(p, { timeoutMs: 50, retryMs: 1 }, task('TASK_STATE_WORKING'));
    expect(r.settled).toBe(false);
    expect(r.task.status.state).toBe('TASK_STATE_WORKING');
  });

  it('hands an error that may not be retried to the caller', async () => {
    const p = away(() => {
      throw new ShroomsError('TASK_NOT_FOUND', 'no such task');
    });
    await expect(waitForTask(p, { retryMs: 1 }, task('TASK_STATE_WORKING'))).rejects.toMatchObject({ key: 'TASK_NOT_FOUND' });
  });
});
