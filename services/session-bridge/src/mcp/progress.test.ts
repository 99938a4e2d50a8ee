import type { Task } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { progressReporter, type ToolExtra } from './progress.js';

const queued = (): Task => ({
  id: 'review:m-1',
  contextId: 'c',
  status: { state: 'TASK_STATE_SUBMITTED' },
  metadata: { 'shrooms/queued': true },
});

function recorder() {
  const messages: string[] = [];
  const extra = {
    _meta: { progressToken: 't' },
    sendNotification: async (n: { params: { message: string } }) => void messages.push(n.params.message),
  } as unknown as ToolExtra;
  return { extra, messages };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('progress while a tool waits', () => {
  it('says what a queued task waits for, and keeps saying it when the task is read again unchanged', async () => {
    const { extra, messages } = recorder();
    const p = progressReporter(extra, {
      intervalMs: 60_000,
      totalSeconds: 600,
      machine: 'home',
      explain: async (s) => ({ ...s, note: 'home/review works on home/review:m-0' }),
    });
    p.update(queued());
    await settle();
    p.update(queued()); // the same state, read again (a new object)
    await settle();
    p.update({ ...queued(), status: { state: 'TASK_STATE_WORKING' }, metadata: {} });
    p.stop();
    expect(messages.map((m) => m.replace(/ — waited .*$/, ''))).toEqual([
      'home/review:m-1 is queued',
      'home/review:m-1 is queued (home/review works on home/review:m-0)',
      'home/review:m-1 is queued (home/review works on home/review:m-0)',
      'home/review:m-1 is working', // no longer queued: what it waited for is not said
    ]);
  });

  it('sends nothing when the client asked for no progress', () => {
    const { extra, messages } = recorder();
    delete (extra as { _meta?: unknown })._meta;
    const p = progressReporter(extra, { intervalMs: 50, totalSeconds: 1, machine: 'home' });
    p.update(queued());
    p.stop();
    expect(messages).toEqual([]);
  });
});
