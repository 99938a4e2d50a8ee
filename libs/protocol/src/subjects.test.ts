import { describe, expect, it } from 'vitest';
import { BUCKETS, keys, kvSubject, machineOfSchedulerKey, noTaskMessage, subjects, taskOfKey } from './subjects.js';

describe('subjects', () => {
  it('pins every subject string', () => {
    expect(subjects.bridge('laptop', 'webapp', 'deliver')).toBe('shrooms.bridge.laptop.webapp.deliver');
    expect(subjects.bridge('laptop', 'webapp', 'cancel')).toBe('shrooms.bridge.laptop.webapp.cancel');
    expect(subjects.bridge('laptop', 'webapp', 'update')).toBe('shrooms.bridge.laptop.webapp.update');
    expect(subjects.bridge('laptop', 'webapp', 'control')).toBe('shrooms.bridge.laptop.webapp.control');
    expect(subjects.bridgesOfMachine('laptop')).toBe('shrooms.bridge.laptop.>');
    expect(subjects.bridgeInbox('laptop')).toBe('_INBOX_bridge.laptop');
    expect(subjects.guardAdmit()).toBe('shrooms.guard.admit');
    expect(subjects.guardControl()).toBe('shrooms.guard.control');
    expect(subjects.scheduler('create')).toBe('shrooms.sched.create');
    expect(subjects.signal('pi5', 'jimmy')).toBe('shrooms.signal.pi5.jimmy');
    expect(subjects.notify('pi5', 'jimmy', 'stalled')).toBe('shrooms.notify.pi5.jimmy.stalled');
    expect(subjects.refusal('pi5', 'jimmy')).toBe('shrooms.refusal.pi5.jimmy');
    expect(keys.task('laptop', 'review', 'cli-1')).toBe('laptop.review.cli-1');
    expect(keys.signal('laptop', 'review')).toBe('laptop.review');
    expect(keys.rate('pi5', 'laptop', 'review')).toBe('rate.pi5.laptop.review');
    expect(keys.policy('pi5', '*')).toBe('pi5._2A');
    expect(BUCKETS.guardPolicy).toBe('shrooms_guard_policy');
    expect(kvSubject(BUCKETS.tasks, 'a.b.c')).toBe('$KV.shrooms_tasks.a.b.c');
    expect(keys.schedulerMachine('pi.5')).toBe('_schedulers.pi_2E5');
  });

  it('reads the machine back from its scheduler key, and from no other key', () => {
    expect(machineOfSchedulerKey(keys.schedulerMachine('pi.5'))).toBe('pi.5');
    for (const other of [keys.schedule('sched-1'), '_schedulers', '_schedulers.a_zz', 'x._schedulers.home'])
      expect(machineOfSchedulerKey(other), other).toBeUndefined();
  });

  it('reads the task back from its ledger key, and from no other key', () => {
    const key = keys.task('pi.5', 'web app', 'id.with.dots');
    expect(taskOfKey(key)).toEqual({ machine: 'pi.5', session: 'web app', messageId: 'id.with.dots' });
    for (const other of ['_health.m.n', 'm.s', 'm.s.x.y', 'm..x', 'm.s.bad_ZZ']) expect(taskOfKey(other), other).toBeUndefined();
  });

  it('names a missing task as its caller does, not by its ledger key', () => {
    expect(noTaskMessage(keys.task('vm', 'demo', 'a.b'))).toBe('no task demo:a.b on vm/demo');
    expect(noTaskMessage('_health.m.n')).toBe('no task _health.m.n');
  });

  it('encodes user tokens so they cannot reach another session', () => {
    expect(subjects.bridge('laptop', 'a.b', 'deliver')).toBe('shrooms.bridge.laptop.a_2Eb.deliver');
    expect(subjects.bridge('laptop', '*', 'deliver')).toBe('shrooms.bridge.laptop._2A.deliver');
    expect(subjects.bridge('laptop', '>', 'deliver')).toBe('shrooms.bridge.laptop._3E.deliver');
    expect(keys.task('m', 's', 'id with space.and.dots')).toBe('m.s.id_20with_20space_2Eand_2Edots');
    expect(keys.task('m', 's', 'x').split('.')).toHaveLength(3);
  });
});
