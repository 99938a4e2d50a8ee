import { GatewayUnreachableError } from '@shrooms/client';
import { ShroomsError } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { exitForError, exitForTask, parse, UsageError } from './io.js';
import { taskText } from './show.js';

describe('exit codes', () => {
  it('exits 2 for refusals and 1 for everything a person must fix', () => {
    for (const key of ['LOOP_GUARD', 'CHAIN_CYCLE', 'NOT_ALLOWED', 'UPDATE_FORBIDDEN', 'TASK_NOT_CANCELABLE', 'QUEUE_FULL'] as const) {
      expect(exitForError(new ShroomsError(key, 'no'))).toBe(2);
    }
    for (const key of ['INVALID_PARAMS', 'TASK_NOT_FOUND', 'SESSION_NOT_FOUND', 'SCHEDULER_UNAVAILABLE', 'BRIDGE_UNAVAILABLE'] as const) {
      expect(exitForError(new ShroomsError(key, 'no'))).toBe(1);
    }
    expect(exitForError(new GatewayUnreachableError('http://x'))).toBe(1);
    expect(exitForError(new UsageError('x'))).toBe(1);
  });

  it('exits 2 for a failed, rejected or canceled task and 0 otherwise', () => {
    expect(exitForTask({ state: 'TASK_STATE_FAILED' })).toBe(2);
    expect(exitForTask({ state: 'TASK_STATE_REJECTED' })).toBe(2);
    expect(exitForTask({ state: 'TASK_STATE_CANCELED' })).toBe(2);
    expect(exitForTask({ state: 'TASK_STATE_INPUT_REQUIRED' })).toBe(0);
    expect(exitForTask({ state: 'TASK_STATE_WORKING' })).toBe(0);
  });
});

describe('arguments and text', () => {
  it('turns an unknown option into a one-line usage error', () => {
    expect(() => parse(['--nope'], {})).toThrow(UsageError);
    try {
      parse(['--nope'], {});
    } catch (e) {
      expect((e as Error).message.includes('\n')).toBe(false);
    }
  });

  it('tells how to follow a task the wait left open', () => {
    const s = {
      task: 'm/s:1',
      agent: 'm/s',
      state: 'TASK_STATE_WORKING',
      status: 'working',
      finished: false,
      needsInput: false,
      held: false,
      acknowledged: false,
      stalled: false,
    };
    expect(taskText(s, { waitedOut: true })).toBe('m/s:1 is still working; follow it: shrooms-agent a2a get m/s:1 --wait');
  });
});
