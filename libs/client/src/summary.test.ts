import type { Task } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { describeTask, summarize } from './summary.js';

const base: Task = {
  id: 'review:m-1',
  contextId: 'c',
  status: { state: 'TASK_STATE_SUBMITTED', timestamp: '2026-10-08T09:15:02.000Z' },
  history: [{ messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'run the tests' }] }],
  metadata: { 'shrooms/queued': true },
};

describe('task summaries', () => {
  it('names the task whole and shows a queued task as queued', () => {
    const s = summarize(base, 'home');
    expect(s).toMatchObject({
      task: 'home/review:m-1',
      agent: 'home/review',
      status: 'queued',
      finished: false,
      needsInput: false,
      request: 'run the tests',
    });
    expect(describeTask(s, { waitedOut: true })).toMatch(/follow it with task_status, task "home\/review:m-1"/);
  });

  it('shows a held task as held for the owner of its session, with how to release it', () => {
    const held: Task = { ...base, metadata: { 'shrooms/queued': true, 'shrooms/held': true } };
    const s = summarize(held, 'home');
    expect(s).toMatchObject({ status: 'held', held: true });
    expect(describeTask(s)).toBe(
      'Task home/review:m-1 is held. It is held for the owner of home/review: it runs once they release it ' +
        '(on that machine: shrooms-agent a2a release home/review:m-1, or reject it). Follow it with task_status, task "home/review:m-1".',
    );
    expect(summarize(base, 'home').held).toBe(false);
  });

  it('shows what the bridge says of an open task, and only of an open one', () => {
    const note = { messageId: 'n', role: 'ROLE_AGENT' as const, parts: [{ text: 'the model endpoint answers 500; retrying' }] };
    const s = summarize({ ...base, status: { state: 'TASK_STATE_WORKING', message: note }, metadata: {} }, 'home');
    expect(s.note).toBe('the model endpoint answers 500; retrying');
    expect(describeTask(s)).toMatch(/is working\. Now: the model endpoint answers 500; retrying\. Follow it/);
    expect(summarize({ ...base, status: { state: 'TASK_STATE_FAILED', message: note } }, 'home').note).toBeUndefined();
  });

  it('puts the reply of a finished task first in the text', () => {
    const done: Task = {
      ...base,
      status: { state: 'TASK_STATE_COMPLETED', message: { messageId: 'r', role: 'ROLE_AGENT', parts: [{ text: 'all green' }] } },
      metadata: {},
    };
    const s = summarize(done, 'home');
    expect(s.reply).toBe('all green');
    expect(describeTask(s)).toBe('Task home/review:m-1 is completed.\nReply:\nall green');
  });

  it('tells how to answer a task that needs input', () => {
    const blocked: Task = {
      ...base,
      status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: 'r', role: 'ROLE_AGENT', parts: [{ text: 'which branch?' }] } },
    };
    expect(describeTask(summarize(blocked, 'home'))).toMatch(/needs: which branch\?\nAnswer with ask_agent, task "home\/review:m-1"/);
  });
});
