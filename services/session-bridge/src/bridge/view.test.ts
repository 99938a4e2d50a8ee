import type { Task } from '@shrooms/protocol';
import { ShroomsError } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { SessionView, type ViewEntry } from './view.js';

const limits = { queueLength: 3, openTasks: 5 };

/** `answer`: an answer to it queued it; `said`: its history ends with the asker's words all the same (a permission prompt's allow). */
function entry(id: string, state: string, o: { held?: boolean; askedAt?: string; answer?: boolean; said?: boolean } = {}): ViewEntry {
  const task = {
    id: `s:${id}`,
    contextId: 'c',
    status: { state },
    history:
      o.answer || o.said
        ? [
            { messageId: `${id}-1`, role: 'ROLE_USER', parts: [{ text: 'ask' }] },
            { messageId: `${id}-2`, role: 'ROLE_AGENT', parts: [{ text: 'need more' }] },
            { messageId: `${id}-3`, role: 'ROLE_USER', parts: [{ text: 'here' }] },
          ]
        : [{ messageId: `${id}-1`, role: 'ROLE_USER', parts: [{ text: 'ask' }] }],
    metadata: {
      ...(o.held ? { 'shrooms/held': true } : {}),
      ...(o.answer ? { 'shrooms/answer': `${id}-3` } : {}),
      'shrooms/created_at': o.askedAt ?? '2026-12-01T08:00:00Z',
    },
  } as unknown as Task;
  return { key: `k.${id}`, entry: { task } };
}

describe('SessionView', () => {
  it('queues a submitted task and counts it open and waiting', () => {
    const v = new SessionView();
    v.track(entry('a', 'TASK_STATE_SUBMITTED'));
    expect([v.queued, v.waiting, v.openCount]).toEqual([1, 1, 1]);
    expect(v.next()?.key).toBe('k.a');
    expect(v.next()).toBeUndefined();
  });

  it('keeps a held task apart from the queue until it is let go', () => {
    const v = new SessionView();
    const held = entry('h', 'TASK_STATE_SUBMITTED', { held: true });
    v.track(held);
    expect([v.queued, v.waiting]).toEqual([0, 1]);
    expect(v.next()).toBeUndefined();
    v.unhold(held);
    expect(v.next()?.key).toBe('k.h');
  });

  it('ignores finished tasks and keeps working ones open but not queued', () => {
    const v = new SessionView();
    v.track(entry('done', 'TASK_STATE_COMPLETED'));
    v.track(entry('w', 'TASK_STATE_WORKING'));
    expect([v.openCount, v.queued]).toEqual([1, 0]);
    expect(v.knows('k.done')).toBe(false);
    expect(v.knows('k.w')).toBe(true);
  });

  it('puts answers to blocked tasks ahead of new tasks, each group in the order asked', () => {
    const v = new SessionView();
    v.track(entry('new-late', 'TASK_STATE_SUBMITTED', { askedAt: '2026-12-01T08:03:00Z' }));
    v.track(entry('new-early', 'TASK_STATE_SUBMITTED', { askedAt: '2026-12-01T08:01:00Z' }));
    v.track(entry('answer', 'TASK_STATE_SUBMITTED', { askedAt: '2026-12-01T08:05:00Z', answer: true }));
    expect([v.next()?.key, v.next()?.key, v.next()?.key]).toEqual(['k.answer', 'k.new-early', 'k.new-late']);
  });

  it("queues a task whose history merely ends with the asker's words (a permission prompt's allow, then a restart) in the order asked", () => {
    const v = new SessionView();
    v.track(entry('new-early', 'TASK_STATE_SUBMITTED', { askedAt: '2026-12-01T08:01:00Z' }));
    v.track(entry('allowed-late', 'TASK_STATE_SUBMITTED', { askedAt: '2026-12-01T08:05:00Z', said: true }));
    expect([v.next()?.key, v.next()?.key]).toEqual(['k.new-early', 'k.allowed-late']);
  });

  it('never queues the current task again', () => {
    const v = new SessionView();
    const a = entry('a', 'TASK_STATE_SUBMITTED');
    v.track(a);
    const q = v.next()!;
    v.start({ key: q.key, taskId: q.taskId }, 'TASK_STATE_WORKING');
    v.enqueue(a);
    expect(v.queued).toBe(0);
    expect(v.isCurrent('k.a')).toBe(true);
    expect(v.busy(true)).toBe(true);
  });

  it('is busy while the harness is not idle even with no current task', () => {
    const v = new SessionView();
    expect(v.busy(true)).toBe(false);
    expect(v.busy(false)).toBe(true);
  });

  it('keeps a blocked task open and closes a done one; neither stays current', () => {
    const v = new SessionView();
    v.start({ key: 'k.a', taskId: 's:a' }, 'TASK_STATE_WORKING');
    v.updated('k.a', 'TASK_STATE_INPUT_REQUIRED', true);
    expect([v.current, v.openCount]).toEqual([undefined, 1]);
    v.start({ key: 'k.b', taskId: 's:b' }, 'TASK_STATE_WORKING');
    v.updated('k.b', 'TASK_STATE_COMPLETED', false);
    expect([v.current, v.openCount]).toEqual([undefined, 1]);
  });

  it('forgets a task everywhere and says whether it was the current one', () => {
    const v = new SessionView();
    v.track(entry('q', 'TASK_STATE_SUBMITTED'));
    v.start({ key: 'k.c', taskId: 's:c' }, 'TASK_STATE_WORKING');
    expect(v.forget('k.q')).toBe(false);
    expect(v.forget('k.c')).toBe(true);
    expect([v.queued, v.openCount, v.current]).toEqual([0, 0, undefined]);
  });

  it('clears the current task only when the key matches', () => {
    const v = new SessionView();
    v.start({ key: 'k.c', taskId: 's:c' }, 'TASK_STATE_WORKING');
    expect(v.clearCurrent('k.other')).toBeUndefined();
    expect(v.clearCurrent('k.c')?.key).toBe('k.c');
    expect(v.current).toBeUndefined();
    expect(v.openCount).toBe(1); // a stalled task stays open
  });

  it('refuses a new task with QUEUE_FULL when queued and held reach the limit', () => {
    const v = new SessionView();
    v.track(entry('a', 'TASK_STATE_SUBMITTED'));
    v.track(entry('b', 'TASK_STATE_SUBMITTED'));
    v.track(entry('h', 'TASK_STATE_SUBMITTED', { held: true }));
    const err = (() => {
      try {
        v.checkRoom('m/s', limits);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ShroomsError);
    expect((err as ShroomsError).key).toBe('QUEUE_FULL');
    expect((err as ShroomsError).details).toEqual({ limit: 'queueLength', max: 3, setting: 'LIMIT_QUEUE_LENGTH' });
    expect((err as ShroomsError).message).toMatch(/^m\/s has 3 tasks waiting \(2 queued, 1 held for its owner\); the limit is 3/);
  });

  it('refuses a new task with LIMIT_EXCEEDED when the open tasks reach the limit', () => {
    const v = new SessionView();
    for (const id of ['a', 'b', 'c', 'd', 'e']) v.track(entry(id, 'TASK_STATE_INPUT_REQUIRED'));
    expect(() => v.checkRoom('m/s', limits)).toThrow(expect.objectContaining({ key: 'LIMIT_EXCEEDED' }));
  });

  it('puts a task that could not start back in its place', () => {
    const v = new SessionView();
    v.track(entry('a', 'TASK_STATE_SUBMITTED', { askedAt: '2026-12-01T08:01:00Z' }));
    v.track(entry('b', 'TASK_STATE_SUBMITTED', { askedAt: '2026-12-01T08:02:00Z' }));
    const a = v.next()!;
    v.putBack(a);
    expect(v.next()?.key).toBe('k.a');
  });

  it('counts tasks still being written to wait in the room, and frees their place when the write ends', () => {
    const v = new SessionView();
    v.track(entry('a', 'TASK_STATE_SUBMITTED'));
    expect(v.reserve('k.b')).toBe(true);
    expect(v.reserve('k.b')).toBe(false); // a resend racing its first delivery
    expect(v.reserve('k.c')).toBe(true);
    expect([v.queued, v.arriving, v.waiting]).toEqual([1, 2, 3]);
    expect(() => v.checkRoom('m/s', limits)).toThrow(expect.objectContaining({ key: 'QUEUE_FULL' }));
    expect(v.unreserve('k.b')).toBe(false);
    v.track(entry('b', 'TASK_STATE_SUBMITTED'));
    expect(() => v.checkRoom('m/s', limits)).toThrow(expect.objectContaining({ key: 'QUEUE_FULL' }));
    expect(v.unreserve('k.c')).toBe(false);
    expect([v.queued, v.arriving, v.waiting]).toEqual([2, 0, 2]);
    v.checkRoom('m/s', limits);
  });

  it('counts tasks being written as open against the open-task limit', () => {
    const v = new SessionView();
    for (const id of ['a', 'b', 'c', 'd']) v.track(entry(id, 'TASK_STATE_INPUT_REQUIRED'));
    v.checkRoom('m/s', limits);
    v.reserve('k.e');
    expect(() => v.checkRoom('m/s', limits)).toThrow(expect.objectContaining({ key: 'LIMIT_EXCEEDED' }));
  });

  it('says a task being written was touched meanwhile (a change by someone else, a cancel), so it is read again', () => {
    const v = new SessionView();
    expect(v.touch('k.x')).toBe(false); // nothing being written: the caller goes on as usual
    v.reserve('k.a');
    v.reserve('k.b');
    expect(v.touch('k.a')).toBe(true);
    v.forget('k.b');
    expect(v.unreserve('k.a')).toBe(true);
    expect(v.unreserve('k.b')).toBe(true);
    expect(v.arriving).toBe(0);
  });
});
