import { describe, expect, it } from 'vitest';
import { ShroomsError } from '@shrooms/protocol';
import { annotate, answer, block, cancel, complete, expire, needAuth, newStarted, newTask, note, start, view } from './transitions.js';

const now = new Date('2026-11-30T10:00:00Z');
const fresh = () =>
  newTask({
    id: 's:m1',
    contextId: 'c',
    message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'do it' }] },
    metadata: {},
    queued: true,
    now,
  });

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

describe('task transitions', () => {
  it('never changes the entry it is given, so entries may share what did not change', () => {
    const before = deepFreeze(start(fresh(), now));
    const copy = JSON.stringify(before);
    const blocked = deepFreeze(block(before, 'which branch?', now, { 'shrooms/last_worker_line': 'hm' }));
    const answered = deepFreeze(answer(blocked, { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'main' }] }, now));
    const again = deepFreeze(start(answered, now));
    for (const change of [
      () => complete(again, 'done', now, [{ data: { n: 1 } }]),
      () => cancel(again, 'me', now),
      () => expire(again, now),
      () => note(again, 'slow model', now, { 'shrooms/last_worker_line': 'x' }),
      () => annotate(again, { 'shrooms/acked': true }),
      () => needAuth(again, 'log in', now),
    ])
      expect(change).not.toThrow();
    expect(JSON.stringify(before)).toBe(copy);
    expect(again.task.history?.map((m) => m.messageId)).toEqual(['m1', 's:m1#blocked-2', 'm2']);
  });

  it('goes submitted → working → completed with the summary as status message and artifact', () => {
    const done = complete(start(fresh(), now), 'all green', now);
    expect(done.v).toBe(3);
    expect(done.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.task.status.message?.parts[0]?.text).toBe('all green');
    expect(done.task.artifacts?.[0]?.parts[0]?.text).toBe('all green');
    expect(done.task.metadata?.['shrooms/queued']).toBeUndefined();
    expect(done.events.map((e) => Object.keys(e)[0])).toEqual(['artifactUpdate', 'statusUpdate']);
  });

  it('names a new task in its creation event, without a second copy of its message and metadata', () => {
    const asked = fresh();
    expect(asked.events).toEqual([{ task: { id: 's:m1', contextId: 'c', status: asked.task.status } }]);
    expect(asked.task.history?.[0]?.parts[0]?.text).toBe('do it');
  });

  it('stores a task started at once as two writes would leave it, with the events of both', () => {
    const message = { messageId: 'm1', role: 'ROLE_USER' as const, parts: [{ text: 'do it' }] };
    const input = { id: 's:m1', contextId: 'c', message, metadata: {}, now };
    const once = newStarted(input);
    const twice = start(newTask({ ...input, queued: false }), now);
    expect(once.v).toBe(twice.v);
    expect(once.task).toEqual(twice.task);
    expect(once.events).toEqual([...newTask({ ...input, queued: false }).events, ...twice.events]);
  });

  it('returns files and data alone in the artifact when the summary is empty', () => {
    const file = { raw: 'dGNr', filename: 'output.txt', mediaType: 'text/plain' };
    expect(complete(start(fresh(), now), '', now, [file]).task.artifacts?.[0]?.parts).toEqual([file]);
    expect(complete(start(fresh(), now), 'see file', now, [file]).task.artifacts?.[0]?.parts).toEqual([{ text: 'see file' }, file]);
  });

  it('keeps terminal states absorbing: nothing reopens a finished task', () => {
    const done = complete(start(fresh(), now), 'ok', now);
    expect(() => start(done, now)).toThrow(ShroomsError);
    expect(() => block(done, 'more?', now)).toThrow(/cannot/);
    expect(() => answer(done, { messageId: 'x', role: 'ROLE_USER', parts: [{ text: 'hi' }] }, now)).toThrow(/finished/);
    expect(() => cancel(done, 'me', now)).toThrow(expect.objectContaining({ key: 'TASK_NOT_CANCELABLE' }));
  });

  it('cancels once and is idempotent after', () => {
    const c = cancel(fresh(), 'laptop', now)!;
    expect(c.task.status.state).toBe('TASK_STATE_CANCELED');
    expect(cancel(c, 'laptop', now)).toBeNull();
  });

  it('takes an answer to a blocked task back into the queue with the answer in its history', () => {
    const blocked = block(start(fresh(), now), 'which branch?', now);
    const answered = answer(blocked, { messageId: 'a1', role: 'ROLE_USER', parts: [{ text: 'main' }] }, now);
    expect(answered.task.status.state).toBe('TASK_STATE_SUBMITTED');
    expect(answered.task.history?.map((m) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT', 'ROLE_USER']);
    expect(() => answer(start(fresh(), now), { messageId: 'a2', role: 'ROLE_USER', parts: [{ text: 'x' }] }, now)).toThrow(
      /only a task that needs input/,
    );
  });

  it('starts the reminder ladder afresh for a task taken up again, keeping the hourly log', () => {
    const stalled = annotate(start(fresh(), now), {
      'shrooms/nudges': 6,
      'shrooms/last_nudge': '2026-11-30T10:30:00Z',
      'shrooms/stalled': '2026-11-30T11:00:00Z',
      'shrooms/nudge_log': [1, 2],
    })!;
    const blocked = block(stalled, 'which branch?', now);
    const again = start(answer(blocked, { messageId: 'a1', role: 'ROLE_USER', parts: [{ text: 'main' }] }, now), now);
    expect(again.task.metadata).not.toHaveProperty('shrooms/stalled');
    expect(again.task.metadata).not.toHaveProperty('shrooms/nudges');
    expect(again.task.metadata).not.toHaveProperty('shrooms/last_nudge');
    expect(again.task.metadata?.['shrooms/nudge_log']).toEqual([1, 2]);
  });

  it('asks for authorization as an interrupted state that an answer takes back into the queue', () => {
    const auth = needAuth(start(fresh(), now), 'sign in first', now);
    expect(auth.task.status).toMatchObject({ state: 'TASK_STATE_AUTH_REQUIRED', message: { parts: [{ text: 'sign in first' }] } });
    const answered = answer(auth, { messageId: 'a1', role: 'ROLE_USER', parts: [{ text: 'done' }] }, now);
    expect(answered.task.status.state).toBe('TASK_STATE_SUBMITTED');
    expect(() => needAuth(complete(start(fresh(), now), 'ok', now), 'x', now)).toThrow(/cannot/);
  });

  it('expires an open task as canceled with shrooms/expired, and leaves a finished one alone', () => {
    const e = expire(fresh(), now)!;
    expect(e.task.status.state).toBe('TASK_STATE_CANCELED');
    expect(e.task.metadata?.['shrooms/expired']).toBe(now.toISOString());
    expect(expire(complete(start(fresh(), now), 'ok', now), now)).toBeNull();
  });

  it('notes on a working task as its status message, takes it away with "", and leaves other states alone', () => {
    const w = start(fresh(), now);
    const noted = note(w, 'the model endpoint answers 500; retrying', now)!;
    expect(noted.task.status).toMatchObject({
      state: 'TASK_STATE_WORKING',
      message: { role: 'ROLE_AGENT', parts: [{ text: 'the model endpoint answers 500; retrying' }] },
    });
    expect(noted.events).toHaveLength(1);
    expect(note(noted, 'the model endpoint answers 500; retrying', now)).toBeNull();
    expect(note(noted, '', now)!.task.status.message).toBeUndefined();
    expect(note(fresh(), 'x', now)).toBeNull();
  });

  it('annotates any state but writes nothing when nothing changes', () => {
    const done = complete(start(fresh(), now), 'ok', now);
    const acked = annotate(done, { 'shrooms/acknowledged': true })!;
    expect(acked.task.status).toEqual(done.task.status);
    expect(annotate(acked, { 'shrooms/acknowledged': true })).toBeNull();
  });

  it('trims history for readers and drops artifacts when asked', () => {
    const done = complete(start(fresh(), now), 'ok', now);
    expect(view(done.task, { historyLength: 1 }).history).toHaveLength(1);
    expect(view(done.task, { historyLength: 0 }).history).toBeUndefined();
    expect(view(done.task, { includeArtifacts: false }).artifacts).toBeUndefined();
  });
});
