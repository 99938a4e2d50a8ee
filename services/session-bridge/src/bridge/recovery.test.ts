import type { Stored } from '@shrooms/ledger';
import { ShroomsError, type Task } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import type { Core } from './core.js';
import { Recovery } from './recovery.js';
import { SessionView } from './view.js';
import type { TurnLoop } from './turns.js';

/**
 * reconcile: a change someone else made to the session's tasks. The ledger here is a stand-in that
 * answers reads as one whose replicas lag behind the watch does (Ledger.get refuses a read older
 * than `atLeast`): a lagging replica cannot be made to order with real NATS. Everything else is the
 * bridge's own.
 */
function stored(id: string, state: string, revision: number): Stored {
  const task = {
    id: `s:${id}`,
    contextId: 'c',
    status: { state },
    history: [{ messageId: id, role: 'ROLE_USER', parts: [{ text: 'ask' }] }],
    metadata: { 'shrooms/created_at': '2026-12-01T08:00:00Z' },
  } as unknown as Task;
  return { key: `k.${id}`, revision, entry: { v: 1, task, events: [] } };
}

function setup(read: (key: string) => Stored | null) {
  const view = new SessionView();
  const warned: string[] = [];
  let pumps = 0;
  const core = {
    view,
    config: { BRIDGE_REDELIVERIES: 3 },
    ledger: {
      get: async (key: string, opts: { atLeast?: number } = {}) => {
        const s = read(key);
        if (opts.atLeast && (!s || s.revision < opts.atLeast)) throw new ShroomsError('INTERNAL', 'not caught up; retry');
        return s;
      },
      // A compare-and-set on what `read` answers now (the task as stored when the write is made).
      transition: async (key: string, change: (e: Stored['entry']) => Stored['entry'] | null) => {
        const s = read(key)!;
        const next = change(s.entry);
        return next ? { ...s, revision: s.revision + 1, entry: next } : s;
      },
    },
    log: { warn: (_o: unknown, msg: string) => warned.push(msg), info: () => {}, error: (_o: unknown, msg: string) => warned.push(msg) },
    changed: () => {},
    serial: { run: async (fn: () => Promise<unknown>) => fn() },
    harness: () => harness,
    stopping: () => harness.stopping,
  } as unknown as Core;
  /** What harnessExited starts again: `start` answers `starts` in turn (true: it runs), then runs. */
  const harness = {
    starts: [] as boolean[],
    tried: 0,
    stopping: false,
    async start() {
      if (this.starts[this.tried++] === false) throw new Error(`start ${this.tried} failed`);
    },
  };
  const turns = { pump: async () => void pumps++, drop: async (key: string) => void view.forget(key) } as unknown as TurnLoop;
  const recovery = new Recovery(core, turns, () => {}, { firstMs: 1, maxMs: 4 });
  return { view, warned, recovery, harness, pumps: () => pumps };
}

describe('Recovery.reconcile', () => {
  it('takes up a task stored WORKING that the view does not run, and queues it', async () => {
    const s = stored('w', 'TASK_STATE_WORKING', 7);
    const t = setup(() => s);
    await t.recovery.reconcile(s);
    expect([t.view.knows('k.w'), t.view.queued, t.view.openCount, t.pumps()]).toEqual([true, 1, 1, 1]);
    expect(t.view.next()?.key).toBe('k.w');
    expect(t.warned).toEqual(['taking up a task stored WORKING that this bridge never started; it waits in the queue']);
  });

  it('leaves a WORKING task it runs as it is', async () => {
    const s = stored('w', 'TASK_STATE_WORKING', 7);
    const t = setup(() => s);
    t.view.start({ key: s.key, taskId: s.entry.task.id }, 'TASK_STATE_WORKING');
    await t.recovery.reconcile(s);
    expect([t.view.queued, t.pumps()]).toEqual([0, 0]);
  });

  it('acts on the watched change when no replica answers it yet', async () => {
    for (const lagging of [null, stored('q', 'TASK_STATE_SUBMITTED', 3)]) {
      const s = stored('q', 'TASK_STATE_SUBMITTED', 9);
      const t = setup(() => lagging);
      await t.recovery.reconcile(s);
      expect([t.view.queued, t.pumps()], `read answered ${lagging ? 'revision 3' : 'nothing'}`).toEqual([1, 1]);
    }
  });

  it('goes by a read newer than the change: a task finished meanwhile is not queued', async () => {
    const t = setup(() => stored('q', 'TASK_STATE_COMPLETED', 12));
    await t.recovery.reconcile(stored('q', 'TASK_STATE_SUBMITTED', 9));
    expect([t.view.knows('k.q'), t.pumps()]).toEqual([false, 0]);
  });
});

describe('Recovery.recover', () => {
  it('delivers a task found WORKING again, queued and counted', async () => {
    const s = stored('w', 'TASK_STATE_WORKING', 7);
    const t = setup(() => s);
    expect(await t.recovery.recover([s])).toEqual(['k.w']);
    expect([t.view.queued, t.view.openCount]).toEqual([1, 1]);
  });

  it('leaves a stalled task set aside: open, not delivered again', async () => {
    const s = stored('w', 'TASK_STATE_WORKING', 7);
    s.entry.task.metadata!['shrooms/stalled'] = '2026-12-01T09:00:00Z';
    const t = setup(() => s);
    expect(await t.recovery.recover([s])).toEqual([]);
    expect([t.view.queued, t.view.openCount, t.view.knows('k.w')]).toEqual([0, 1, true]);
  });

  it('reopens nothing finished between the read and the write (a cancel while it starts)', async () => {
    const found = stored('w', 'TASK_STATE_WORKING', 7);
    const t = setup(() => stored('w', 'TASK_STATE_CANCELED', 8));
    expect(await t.recovery.recover([found])).toEqual([]);
    expect([t.view.queued, t.view.openCount, t.view.knows('k.w')]).toEqual([0, 0, false]);
  });
});

describe('Recovery.harnessExited', () => {
  it('starts the harness again until it runs, then moves the queue', async () => {
    const t = setup(() => null);
    t.harness.starts = [false, false, true];
    await t.recovery.harnessExited(1);
    expect([t.harness.tried, t.pumps()]).toEqual([3, 1]);
    expect(t.warned.filter((m) => m === 'harness restart failed; trying again')).toHaveLength(2);
  });

  it('stops trying once the bridge stops', async () => {
    const t = setup(() => null);
    t.harness.starts = [false, false, false, false];
    const tried = t.recovery.harnessExited(1);
    while (t.harness.tried < 2) await new Promise((r) => setTimeout(r, 1));
    t.harness.stopping = true;
    await tried;
    expect(t.harness.tried).toBeLessThan(4);
    expect(t.pumps()).toBe(0);
  });
});
