/**
 * The engine in one process: replicas ticking on one in-memory store, fake gateways and one clock
 * the tests move (`world()`).
 *
 * Over 300 lines: every test shares that one harness, and the engine they follow is one argument
 * read top to bottom (engine.ts's header).
 */
import { createLogger } from '@shrooms/runtime';
import { describe, expect, it } from 'vitest';
import { SchedulerConfigSchema } from './config.js';
import type { TaskOutcome } from './deliver/results.js';
import type { SendResult } from './deliver/send.js';
import { Engine, retryDelay, type EngineDeps } from './engine.js';
import { schedulerOps } from './service.js';
import { FakeGateways } from './testing/fake-gateway.js';
import { MemoryStore } from './testing/memory-store.js';
import type { CreateScheduleRequest } from '@shrooms/protocol';

const log = createLogger('test', 'silent');
const T0 = Date.parse('2026-05-01T08:00:00Z');
const SEC = 1000;

function world(env: Record<string, string> = {}) {
  const config = SchedulerConfigSchema.parse({
    SHROOMS_MACHINE: 'home',
    SCHEDULER_MIN_INTERVAL_MS: '1000',
    SCHEDULER_LEASE_MS: '5000',
    ...env,
  });
  const store = new MemoryStore();
  const gw = new FakeGateways();
  const clock = { now: T0 };
  const finished = new Map<string, TaskOutcome>();
  const replica = (name: string, extra: Partial<EngineDeps> = {}) =>
    new Engine({
      store,
      send: gw.send,
      resolveGateway: async () => 'http://gateway.test',
      readTask: async (_m, _s, messageId) => finished.get(messageId) ?? { state: 'TASK_STATE_WORKING', finished: false, text: '' },
      log,
      config: { ...config, SCHEDULER_REPLICA_ID: name },
      now: () => clock.now,
      ...extra,
    });
  const a = replica('a');
  const ops = schedulerOps(store, a, config, log, () => clock.now);
  const create = (req: Partial<CreateScheduleRequest> = {}) =>
    ops.create({
      recipients: ['home/review'],
      prompt: 'check the roadmap',
      at: '2026-05-01T08:00:10Z',
      origin: { device: 'laptop', from: 'laptop/webapp' },
      ...req,
    });
  /** One tick of each replica at the given time, waiting for what it started. */
  const tickAll = async (at: number, ...engines: Engine[]) => {
    clock.now = at;
    await Promise.all(engines.map((e) => e.tick()));
    await Promise.all(engines.map((e) => e.idle()));
  };
  /** One tick of a replica that then dies mid-send (`gw.hang` set): waits until its send hangs. */
  const tickUntilHung = async (at: number, e: Engine) => {
    clock.now = at;
    const hung = gw.nextHang();
    await e.tick();
    await hung;
  };
  return { config, store, gw, clock, finished, replica, a, ops, create, tickAll, tickUntilHung };
}

describe('firing', () => {
  it('turns a one-shot schedule into one task when it is due, then marks it done', async () => {
    const w = world();
    const { schedule } = await w.create();
    await w.a.rescan();
    await w.tickAll(T0 + 5 * SEC, w.a);
    expect(w.gw.sends).toHaveLength(0);
    await w.tickAll(T0 + 10 * SEC, w.a);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
    const msg = w.gw.sends[0]!;
    expect(msg.messageId).toBe(`sched-${schedule.id}-20260501T080010Z`);
    expect(msg.metadata).toMatchObject({
      'shrooms/schedule': schedule.id,
      'shrooms/occurrence': '2026-05-01T08:00:10.000Z',
      'shrooms/scheduled_by': 'scheduled by laptop (laptop/webapp) for Fri 1 May 2026 08:00:10 (UTC)',
      'shrooms/from': 'laptop/webapp',
    });
    const after = (await w.store.get(schedule.id))!.schedule;
    expect(after).toMatchObject({
      state: 'done',
      next: null,
      fired: 1,
      last: { deliveries: [{ recipient: 'home/review', outcome: 'sent' }] },
    });
  });

  it('sends one task per recipient for each occurrence', async () => {
    const w = world();
    const { schedule } = await w.create({ recipients: ['home/review', 'pi5/tests', 'home/review'], repeat: 'every 10s;count=2' });
    await w.a.rescan();
    await w.tickAll(T0 + 10 * SEC, w.a);
    await w.tickAll(T0 + 20 * SEC, w.a);
    expect(
      w.gw
        .tasksOf(schedule.id)
        .map((m) => `${m.machine}/${m.session}`)
        .sort(),
    ).toEqual(['home/review', 'home/review', 'pi5/tests', 'pi5/tests']);
  });

  it('gives each occurrence of two replicas ticking together exactly one task', async () => {
    const w = world();
    const b = w.replica('b');
    const { schedule } = await w.create({ repeat: 'every 5s;count=20' });
    await Promise.all([w.a.rescan(), b.rescan()]);
    for (let t = 10; t <= 120; t += 1) await w.tickAll(T0 + t * SEC, w.a, b);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(20);
    expect(new Set(w.gw.sends.map((m) => m.messageId)).size).toBe(20);
    expect((await w.store.get(schedule.id))!.schedule).toMatchObject({ state: 'done', fired: 20 });
  });

  it('resends the same message id after a replica dies between the gateway taking it and the advance', async () => {
    const w = world();
    const b = w.replica('b');
    const { schedule } = await w.create();
    await Promise.all([w.a.rescan(), b.rescan()]);
    w.gw.hang = { recordFirst: true }; // a sends, the gateway records it, a never returns
    await w.tickUntilHung(T0 + 10 * SEC, w.a);
    w.gw.hang = null;
    await w.tickAll(T0 + 12 * SEC, b); // lease still held by a
    expect(w.gw.sends).toHaveLength(1);
    await w.tickAll(T0 + 16 * SEC, b); // lease (5 s) ran out: b takes over
    expect(w.gw.sends).toHaveLength(2);
    expect(w.gw.sends[1]!.messageId).toBe(w.gw.sends[0]!.messageId);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
    expect((await w.store.get(schedule.id))!.schedule).toMatchObject({ state: 'done', fired: 1 });
  });

  it('loses nothing when a replica dies between its claim and its send', async () => {
    const w = world();
    const b = w.replica('b');
    const { schedule } = await w.create();
    await Promise.all([w.a.rescan(), b.rescan()]);
    w.gw.hang = { recordFirst: false };
    await w.tickUntilHung(T0 + 10 * SEC, w.a);
    w.gw.hang = null;
    await w.tickAll(T0 + 16 * SEC, b);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
  });

  it('retries an occurrence the gateway could not take, with backoff, and sends it once', async () => {
    const w = world();
    const { schedule } = await w.create();
    await w.a.rescan();
    w.gw.failNext = [{ outcome: 'retry', error: { key: 'GUARD_UNAVAILABLE', message: 'guard away' } }];
    await w.tickAll(T0 + 10 * SEC, w.a);
    expect((await w.store.get(schedule.id))!.schedule.retry).toMatchObject({ attempts: 1, error: expect.stringContaining('guard away') });
    await w.tickAll(T0 + 10.5 * SEC, w.a); // backoff 1 s not over
    expect(w.gw.sends).toHaveLength(1);
    await w.tickAll(T0 + 11 * SEC, w.a);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
    expect((await w.store.get(schedule.id))!.schedule).toMatchObject({ state: 'done', fired: 1 });
    expect((await w.store.get(schedule.id))!.schedule.retry).toBeUndefined();
  });

  it('retries after the wait a gateway that answered asked for, not after a doubling backoff', async () => {
    const w = world();
    const { schedule } = await w.create();
    await w.a.rescan();
    const natsAway: SendResult = { outcome: 'retry', error: { key: 'NATS_UNAVAILABLE', message: 'away' }, retryAfterMs: 2 * SEC };
    w.gw.failNext = [natsAway, natsAway, natsAway, natsAway];
    // Four answers of NATS_UNAVAILABLE (Retry-After 2 s): sent again every 2 s, not after 1, 2, 4, 8 s.
    for (const [i, at] of [10, 12, 14, 16].entries()) {
      await w.tickAll(T0 + at * SEC, w.a);
      expect(w.gw.sends, `at ${at} s`).toHaveLength(i + 1);
      expect((await w.store.get(schedule.id))!.schedule.retry).toMatchObject({ attempts: i + 1 });
    }
    await w.tickAll(T0 + 17.5 * SEC, w.a); // the fourth wait of 2 s not over
    expect(w.gw.sends).toHaveLength(4);
    await w.tickAll(T0 + 18 * SEC, w.a);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
    expect((await w.store.get(schedule.id))!.schedule).toMatchObject({ state: 'done', fired: 1 });
  });

  it('waits for the longest of what the pending recipients need, at most SCHEDULER_RETRY_MAX_MS', () => {
    expect(retryDelay([{ retryAfterMs: 2000 }], 6, 60_000)).toBe(2000);
    expect(retryDelay([{ retryAfterMs: 2000 }, {}], 6, 60_000)).toBe(32_000); // one gateway did not answer
    expect(retryDelay([{}], 1, 60_000)).toBe(1000);
    expect(retryDelay([{ retryAfterMs: 3_600_000 }], 1, 60_000)).toBe(60_000);
  });

  it('fires while a rescan of the bucket does not answer (JetStream away), and tries the rescan again only after SCHEDULER_RESCAN_MS', async () => {
    const w = world({ SCHEDULER_RESCAN_MS: '15000' });
    const { schedule } = await w.create();
    await w.a.rescan();
    let rescans = 0;
    // From now on a full read of the bucket hangs, as one does until its request times out.
    w.store.scan = () => {
      rescans++;
      return new Promise(() => {});
    };
    await w.tickAll(T0 + 10 * SEC, w.a);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
    await w.tickAll(T0 + 11 * SEC, w.a);
    expect(rescans).toBe(0); // the rescan of T0 is not due again before T0 + 15 s
    await w.tickAll(T0 + 16 * SEC, w.a);
    await w.tickAll(T0 + 17 * SEC, w.a);
    expect(rescans).toBe(1); // started once, hanging; the ticks went on
  });

  it('records a refusal and moves on', async () => {
    const w = world();
    const { schedule } = await w.create({ repeat: 'every 10s;count=2' });
    await w.a.rescan();
    w.gw.failNext = [{ outcome: 'refused', error: { key: 'NOT_ALLOWED', message: 'not on the allow-list' } }];
    await w.tickAll(T0 + 10 * SEC, w.a);
    const s = (await w.store.get(schedule.id))!.schedule;
    expect(s.last?.deliveries).toEqual([
      { recipient: 'home/review', outcome: 'refused', error: { key: 'NOT_ALLOWED', message: 'not on the allow-list' } },
    ]);
    expect(s.next?.at).toBe('2026-05-01T08:00:20.000Z');
  });

  it('keeps the send recorded when the store is away for a moment after it', async () => {
    const w = world();
    const { schedule } = await w.create();
    await w.a.rescan();
    const hit = w.gw.send;
    const e = w.replica('c', {
      send: async (url, msg) => {
        const r = await hit(url, msg);
        w.store.failCalls = 2; // the advance fails twice, then NATS is back
        return r;
      },
    });
    await e.rescan();
    w.clock.now = T0 + 10 * SEC;
    await e.fire(schedule.id);
    expect(w.store.failCalls).toBe(0);
    expect((await w.store.get(schedule.id))!.schedule).toMatchObject({ state: 'done', fired: 1 });
  });
});

describe('stopping', () => {
  it('stops while a rescan of the bucket does not answer (JetStream away), without waiting for it', async () => {
    const w = world({ SCHEDULER_RESCAN_MS: '15000' });
    await w.a.rescan();
    let rescans = 0;
    w.store.scan = () => {
      rescans++;
      return new Promise(() => {});
    };
    await w.tickAll(T0 + 16 * SEC, w.a);
    expect(rescans).toBe(1);
    await w.a.stop(); // before: waited for the rescan, which never ends here (about 40 s against NATS)
  });

  it('stops with a send still in flight after the wait it is given; the next replica resends it under the same id', async () => {
    const w = world();
    const b = w.replica('b');
    const { schedule } = await w.create();
    await Promise.all([w.a.rescan(), b.rescan()]);
    w.gw.hang = { recordFirst: true }; // the gateway took it; the answer never comes back to a
    await w.tickUntilHung(T0 + 10 * SEC, w.a);
    w.gw.hang = null;
    await w.a.stop(10);
    await w.tickAll(T0 + 16 * SEC, b); // a's lease (5 s) ran out
    expect(w.gw.sends.map((m) => m.messageId)).toEqual([w.gw.sends[0]!.messageId, w.gw.sends[0]!.messageId]);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
    expect((await w.store.get(schedule.id))!.schedule).toMatchObject({ state: 'done', fired: 1 });
  });
});

describe('missed occurrences', () => {
  it('fires only the latest missed occurrence, once, late, under fire-once', async () => {
    const w = world({ SCHEDULER_GRACE_MS: '30000' });
    const { schedule } = await w.create({ repeat: 'every 10s' });
    await w.a.rescan();
    await w.tickAll(T0 + 300 * SEC, w.a); // down for five minutes
    expect(w.gw.sends.map((m) => m.metadata['shrooms/occurrence'])).toEqual(['2026-05-01T08:04:20.000Z']);
    expect(w.gw.sends[0]!.metadata['shrooms/scheduled_by']).toMatch(/sent late/);
    const s = (await w.store.get(schedule.id))!.schedule;
    expect(s.missed).toBe(25);
    // then the ones within the grace window, on time
    await w.tickAll(T0 + 301 * SEC, w.a);
    await w.tickAll(T0 + 302 * SEC, w.a);
    await w.tickAll(T0 + 303 * SEC, w.a);
    expect(w.gw.sends.map((m) => m.metadata['shrooms/occurrence'])).toEqual([
      '2026-05-01T08:04:20.000Z',
      '2026-05-01T08:04:30.000Z',
      '2026-05-01T08:04:40.000Z',
      '2026-05-01T08:04:50.000Z',
    ]);
  });

  it('fires no missed occurrence and resumes within the window under skip', async () => {
    const w = world({ SCHEDULER_GRACE_MS: '30000', SCHEDULER_MISSED: 'skip' });
    const { schedule } = await w.create({ repeat: 'every 10s' });
    await w.a.rescan();
    await w.tickAll(T0 + 300 * SEC, w.a); // down for five minutes: 08:00:10…08:04:20 are missed
    expect(w.gw.sends.map((m) => m.metadata['shrooms/occurrence'])).toEqual(['2026-05-01T08:04:30.000Z']);
    expect((await w.store.get(schedule.id))!.schedule).toMatchObject({ missed: 26, fired: 1, next: { at: '2026-05-01T08:04:40.000Z' } });
  });
});

describe('cancel and results', () => {
  it('fires a canceled schedule no more', async () => {
    const w = world();
    const { schedule } = await w.create({ repeat: 'every 10s' });
    await w.a.rescan();
    await w.tickAll(T0 + 10 * SEC, w.a);
    await w.ops.cancel({ id: schedule.id, origin: { device: 'laptop' } });
    for (let t = 11; t < 60; t++) await w.tickAll(T0 + t * SEC, w.a);
    expect(w.gw.sends).toHaveLength(1);
    expect((await w.store.get(schedule.id))!.schedule).toMatchObject({ state: 'canceled', canceledBy: 'laptop' });
  });

  it('sends a finished result back to replyTo once, with its own derived id', async () => {
    const w = world({ SCHEDULER_RESULTS_MS: '1000' });
    const b = w.replica('b');
    const { schedule } = await w.create({ replyTo: 'laptop/webapp' });
    await Promise.all([w.a.rescan(), b.rescan()]);
    await w.tickAll(T0 + 10 * SEC, w.a, b);
    await w.tickAll(T0 + 11 * SEC, w.a, b);
    expect(w.gw.sends).toHaveLength(1); // the worker has not finished
    w.finished.set(`sched-${schedule.id}-20260501T080010Z`, { state: 'TASK_STATE_COMPLETED', finished: true, text: 'roadmap is fine' });
    await w.tickAll(T0 + 12 * SEC, w.a, b);
    await w.tickAll(T0 + 13 * SEC, w.a, b);
    const results = [...w.gw.tasks.values()].filter((m) => m.session === 'webapp');
    expect(results).toHaveLength(1);
    expect(results[0]!.text).toMatch(/completed\.\n\nroadmap is fine$/);
    expect(results[0]!.messageId).toMatch(new RegExp(`^sched-${schedule.id}-20260501T080010Z-re-[0-9a-f]{10}$`));
    expect((await w.store.get(schedule.id))!.schedule.awaiting).toEqual([]);
  });

  it('fires a due schedule while 16 others wait for the results of tasks still open', async () => {
    const w = world();
    // Sixteen schedules fired earlier, each with a task still open, so each has a result waiting.
    for (let i = 0; i < 16; i++) await w.create({ replyTo: 'laptop/webapp' });
    await w.tickAll(T0 + 10 * SEC, w.a);
    const { schedule } = await w.create({ at: '2026-05-01T08:00:20Z' });
    await w.tickAll(T0 + 20 * SEC, w.a);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
  });

  it('fires a due schedule while 16 others are still sending results to a gateway that does not answer', async () => {
    const w = world();
    const e = w.replica('c', {
      send: (url, msg) => (msg.session === 'webapp' ? new Promise<SendResult>(() => {}) : w.gw.send(url, msg)),
    });
    for (let i = 0; i < 16; i++) {
      const { schedule } = await w.create({ replyTo: 'laptop/webapp' });
      w.finished.set(`sched-${schedule.id}-20260501T080010Z`, { state: 'TASK_STATE_COMPLETED', finished: true, text: 'done' });
    }
    const { schedule } = await w.create({ at: '2026-05-01T08:00:20Z' });
    await e.rescan();
    await w.tickAll(T0 + 10 * SEC, e);
    w.clock.now = T0 + 11 * SEC;
    await e.tick(); // sixteen results on their way, never answered
    w.clock.now = T0 + 20 * SEC;
    await e.tick();
    await new Promise((resolve) => setImmediate(resolve)); // the fire's store and gateway calls answer at once
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
  });

  it('looks at one schedule’s waiting results once every SCHEDULER_RESULTS_MS, not on every tick', async () => {
    const w = world({ SCHEDULER_RESULTS_MS: '10000' });
    const looked: number[] = [];
    const e = w.replica('c', {
      readTask: async () => {
        looked.push(w.clock.now);
        return { state: 'TASK_STATE_WORKING', finished: false, text: '' };
      },
    });
    await w.create({ replyTo: 'laptop/webapp' });
    await e.rescan();
    for (let t = 10; t <= 31; t++) await w.tickAll(T0 + t * SEC, e);
    expect(looked.map((at) => (at - T0) / SEC)).toEqual([11, 21, 31]);
  });

  it('keeps the rest of a schedule’s results for the next look once its reply-to session cannot take one', async () => {
    const w = world({ SCHEDULER_RESULTS_MS: '1000' });
    const { schedule } = await w.create({ replyTo: 'laptop/webapp', repeat: 'every 10s;count=2' });
    await w.a.rescan();
    await w.tickAll(T0 + 10 * SEC, w.a);
    await w.tickAll(T0 + 20 * SEC, w.a);
    for (const stamp of ['20260501T080010Z', '20260501T080020Z'])
      w.finished.set(`sched-${schedule.id}-${stamp}`, { state: 'TASK_STATE_COMPLETED', finished: true, text: 'done' });
    w.gw.failNext = [{ outcome: 'retry', error: { key: 'LOOP_GUARD', message: 'too many tasks this hour' }, retryAfterMs: 60 * SEC }];
    await w.tickAll(T0 + 21 * SEC, w.a);
    expect(w.gw.sends.filter((m) => m.session === 'webapp')).toHaveLength(1);
    expect((await w.store.get(schedule.id))!.schedule.awaiting).toHaveLength(2);
  });
});

describe('rescans', () => {
  it('says this machine runs a scheduler when a rescan does not find it said, and only then', async () => {
    const w = world();
    const said: string[] = [];
    const e = w.replica('b', {
      announce: {
        machine: 'home',
        write: async () => {
          said.push('home');
          w.store.schedulers.push('home');
        },
      },
    });
    await e.rescan();
    await e.rescan();
    expect(said).toEqual(['home']);
    // An operator removed it (`nats kv del`): the next rescan says it again.
    w.store.schedulers = [];
    await e.rescan();
    expect(said).toEqual(['home', 'home']);
    // Another machine's is not this one's.
    w.store.schedulers = ['box'];
    await e.rescan();
    expect(said).toHaveLength(3);
  });

  it('keeps a schedule created while a rescan reads the bucket, and fires it on time', async () => {
    const w = world();
    const read = w.store.scan.bind(w.store);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    // The read takes its snapshot at once and answers later, as a slow read of a big bucket does.
    w.store.scan = async () => {
      const found = await read();
      await answered;
      return found;
    };
    const rescan = w.a.rescan();
    const { schedule } = await w.create();
    answer();
    await rescan;
    await w.tickAll(T0 + 10 * SEC, w.a);
    expect(w.gw.tasksOf(schedule.id)).toHaveLength(1);
  });
});

describe('finished schedules', () => {
  const cancel = (w: ReturnType<typeof world>, id: string) => w.ops.cancel({ id, origin: { device: 'laptop' } });
  const stored = async (w: ReturnType<typeof world>) => (await w.store.all()).map((s) => s.schedule.id).sort();

  it('keeps the bucket within LIMIT_SCHEDULES + LIMIT_FINISHED_SCHEDULES through a create→cancel loop, refusing no new schedule', async () => {
    const w = world({ LIMIT_SCHEDULES: '2', LIMIT_FINISHED_SCHEDULES: '3' });
    for (let i = 0; i < 20; i++) {
      const { schedule } = await w.create({ at: '2026-05-01T09:00:00Z' });
      await cancel(w, schedule.id);
      expect(await w.store.all(), `after loop ${i + 1}`).toHaveLength(Math.min(i + 1, 4));
      expect(w.a.cache.size).toBeLessThanOrEqual(2 + 3);
    }
  });

  it('removes the oldest finished schedules past LIMIT_FINISHED_SCHEDULES at a rescan, and no active one', async () => {
    const w = world({ LIMIT_FINISHED_SCHEDULES: '2' });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await w.create({ at: '2026-05-01T09:00:00Z' })).schedule.id);
    for (const [i, id] of ids.slice(0, 4).entries()) {
      w.clock.now = T0 + (i + 1) * SEC; // canceled one after the other: ids[0] is the oldest
      await cancel(w, id);
    }
    await w.a.rescan();
    expect(await stored(w)).toEqual([ids[2], ids[3], ids[4], ids[5]].sort());
  });

  it('removes a finished schedule with results still to send back only after those without', async () => {
    const w = world({ LIMIT_FINISHED_SCHEDULES: '2' });
    const { schedule: waiting } = await w.create({ replyTo: 'laptop/webapp' });
    await w.a.rescan();
    await w.tickAll(T0 + 10 * SEC, w.a); // fired, done, its task still open
    expect((await w.store.get(waiting.id))!.schedule).toMatchObject({ state: 'done', awaiting: [{ recipient: 'home/review' }] });
    const older = (await w.create({ at: '2026-05-01T09:00:00Z' })).schedule.id;
    const newer = (await w.create({ at: '2026-05-01T09:00:00Z' })).schedule.id;
    w.clock.now = T0 + 20 * SEC;
    await cancel(w, older);
    w.clock.now = T0 + 30 * SEC;
    await cancel(w, newer);
    await w.a.rescan();
    expect(await stored(w)).toEqual([waiting.id, newer].sort());
  });
});
