import { Ledger, transitions } from '@shrooms/ledger';
import { ShroomsError } from '@shrooms/protocol';
import { eventually, tempDir } from '@shrooms/testing';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { Core } from './core.js';
import { Serial } from './serial.js';
import { START_RETRY_MS, TurnLoop } from './turns.js';
import { SessionView } from './view.js';
import { WorkerLines } from './lines.js';
import { OUTBOX_FIRST_RETRY_MS, Outbox } from './outbox.js';
import { OUTBOX_FILE, type OutboxFile } from './outbox-file.js';
import { updateOrKeep } from './worker.js';
import { useRealLedger } from '../testing/ledger.js';

/**
 * The turn loop and the worker's updates against a real ledger on a real nats-server, present, gone
 * (its connection closed: every call refused, as when NATS is away) and back. The session around
 * them (harness, presence) is a stand-in, as no turn is run: what is tested is which task starts
 * and what the ledger ends up holding.
 */
const real = useRealLedger();
/** A task queued the way the gateway queues one while the bridge is away. */
const queued = (id: string) => real.queued('s', id);

/** A ledger as a bridge meets it when NATS is gone: its connection closed, every call refused. */
async function ledgerAway(): Promise<Ledger> {
  const away = await connect({ servers: real.nats.url });
  const l = await Ledger.open(away);
  await away.close();
  return l;
}

function loop() {
  const view = new SessionView();
  const warned: string[] = [];
  const core = {
    machine: 'box',
    session: 's',
    view,
    ledger: real.ledger,
    config: { BRIDGE_WRITE_WAIT_MS: 100 },
    activity: { lines: new WorkerLines() },
    serial: new Serial(),
    stopping: () => false,
    harnessIdle: () => true,
    changed: () => {},
    log: { warn: (_o: unknown, m: string) => void warned.push(m), info: (_o: unknown, m: string) => void warned.push(m), debug: () => {} },
  } as unknown as Core;
  return { view, core, warned, turns: new TurnLoop(core, { fail: async () => undefined }) };
}

describe('TurnLoop.pump', () => {
  it('lets go of a queued task found finished or gone, and starts the next one', async () => {
    const { view, turns } = loop();
    const canceled = await queued('canceled');
    // Queued from a read that was stale: the task was canceled since.
    view.track(canceled);
    await real.ledger.transition(canceled.key, (e) => transitions.cancel(e, 'its asker', new Date()));
    // Queued, and the ledger no longer holds it at all.
    view.track({ ...canceled, key: real.ledger.key('box', 's', 'gone') });
    const waiting = await queued('waiting');
    view.track(waiting);
    expect([view.queued, view.openCount]).toEqual([3, 3]);
    const run = new Promise<string>((resolve) => (turns.run = async (s) => resolve(s.key)));
    await turns.pump();
    expect(await run).toBe(waiting.key);
    expect((await real.ledger.get(waiting.key))!.entry.task.status.state).toBe('TASK_STATE_WORKING');
    // The two are forgotten, not put back: they count open no more and never come up again.
    expect([view.queued, view.openCount, view.knows(canceled.key), view.current?.key]).toEqual([0, 1, false, waiting.key]);
  });

  it('does not reject when the ledger does not take a start: the task waits, and is started once it does', async () => {
    const { view, core, warned, turns } = loop();
    const task = await queued('outage');
    view.track(task);
    (core as { ledger: Ledger }).ledger = await ledgerAway();
    const started: string[] = [];
    turns.run = async (s) => void started.push(s.key);
    await expect(turns.pump()).resolves.toBeUndefined();
    expect([view.queued, started, warned]).toEqual([
      1,
      [],
      [`the next task could not be started; trying again in ${START_RETRY_MS / 1000} s`],
    ]);
    // NATS back: the retry starts it without anyone calling pump again.
    (core as { ledger: Ledger }).ledger = real.ledger;
    await eventually(() => started.length > 0, START_RETRY_MS * 5);
    expect(started).toEqual([task.key]);
    expect((await real.ledger.get(task.key))!.entry.task.status.state).toBe('TASK_STATE_WORKING');
  });
});

describe("the worker's update while the ledger is away", () => {
  async function working(id: string, file?: OutboxFile) {
    const t = loop();
    const s = await real.ledger.transition((await queued(id)).key, (e) => transitions.start(e, new Date()));
    t.view.start({ key: s.key, taskId: s.entry.task.id }, 'TASK_STATE_WORKING');
    let settled = 0;
    const outbox = new Outbox(t.core, () => void settled++, file);
    (t.core as { ledger: Ledger }).ledger = await ledgerAway();
    return { ...t, s, outbox, settled: () => settled };
  }

  it('is kept, frees the session, and reaches the ledger once it answers', async () => {
    const t = await working('kept');
    const taskId = t.s.entry.task.id;
    const said = Date.now();
    await expect(updateOrKeep(t.core, t.outbox, taskId, 'done', 'the answer')).rejects.toMatchObject({
      key: 'NATS_UNAVAILABLE',
      message: expect.stringContaining('is kept and written when it answers'),
    });
    // The session is not held by the task it has finished: the next one may start.
    expect([t.outbox.size, t.view.current, t.view.openCount, t.view.busy(true)]).toEqual([1, undefined, 0, false]);
    (t.core as { ledger: Ledger }).ledger = real.ledger;
    const back = Date.now();
    await eventually(() => t.settled() > 0, OUTBOX_FIRST_RETRY_MS * 10);
    const stored = (await real.ledger.get(t.s.key))!.entry.task;
    expect([stored.status.state, t.outbox.size]).toEqual(['TASK_STATE_COMPLETED', 0]);
    expect(JSON.stringify(stored.artifacts ?? stored.status.message)).toContain('the answer');
    // Finished when the worker said so, not when the ledger took it (the queue's order stays readable).
    const finishedAt = Date.parse(stored.status.timestamp!);
    expect(finishedAt).toBeGreaterThanOrEqual(said);
    expect(finishedAt).toBeLessThan(back);
  });

  it('is let go when the task was finished by someone else meanwhile', async () => {
    const t = await working('canceled-meanwhile');
    await expect(updateOrKeep(t.core, t.outbox, t.s.entry.task.id, 'done', 'late')).rejects.toMatchObject({ key: 'NATS_UNAVAILABLE' });
    await real.ledger.transition(t.s.key, (e) => transitions.cancel(e, 'its asker', new Date()));
    (t.core as { ledger: Ledger }).ledger = real.ledger;
    await eventually(() => t.settled() > 0, OUTBOX_FIRST_RETRY_MS * 10);
    expect([(await real.ledger.get(t.s.key))!.entry.task.status.state, t.outbox.size]).toEqual(['TASK_STATE_CANCELED', 0]);
    expect(t.warned).toContain("the ledger refused the worker's kept update; it is let go");
  });

  it('is kept when the ledger answers with a retryable error (a replica not caught up), and written after', async () => {
    const t = await working('caught-up-later');
    const taskId = t.s.entry.task.id;
    await expect(updateOrKeep(t.core, t.outbox, taskId, 'done', 'kept through it')).rejects.toMatchObject({ key: 'NATS_UNAVAILABLE' });
    // The ledger back, its first write refused as a replica behind answers (a stand-in for that one
    // answer: a lagging replica cannot be timed with real NATS); every later call is the real ledger's.
    let refusals = 0;
    (t.core as { ledger: Ledger }).ledger = new Proxy(real.ledger, {
      get(target, prop, receiver) {
        if (prop === 'transition' && refusals++ === 0)
          return async () => {
            throw new ShroomsError('INTERNAL', "the ledger's replicas have not caught up; retry");
          };
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    await eventually(() => t.settled() > 0, OUTBOX_FIRST_RETRY_MS * 20);
    expect([(await real.ledger.get(t.s.key))!.entry.task.status.state, t.outbox.size]).toEqual(['TASK_STATE_COMPLETED', 0]);
    expect(t.warned).not.toContain("the ledger refused the worker's kept update; it is let go");
  });

  it('gives way to the same update sent again and written', async () => {
    const t = await working('sent-again');
    const taskId = t.s.entry.task.id;
    await expect(updateOrKeep(t.core, t.outbox, taskId, 'done', 'first')).rejects.toMatchObject({ key: 'NATS_UNAVAILABLE' });
    (t.core as { ledger: Ledger }).ledger = real.ledger;
    await updateOrKeep(t.core, t.outbox, taskId, 'done', 'again');
    expect(t.outbox.size).toBe(0);
    await new Promise((r) => setTimeout(r, OUTBOX_FIRST_RETRY_MS * 2));
    expect(t.warned).not.toContain("the ledger refused the worker's kept update; it is let go");
    expect(JSON.stringify((await real.ledger.get(t.s.key))!.entry.task.artifacts)).toContain('again');
  });

  it('is refused as before when the ledger answers with a refusal, and nothing is kept', async () => {
    const t = await working('refused');
    (t.core as { ledger: Ledger }).ledger = real.ledger;
    await expect(updateOrKeep(t.core, t.outbox, 's:not-a-task-here', 'done', 'x')).rejects.toMatchObject({ key: 'TASK_NOT_FOUND' });
    expect(t.outbox.size).toBe(0);
  });

  it('is kept on disk, written by the next start, and its task not delivered again', async () => {
    const dir = await tempDir('shrooms-outbox');
    const file = { path: join(dir.path, OUTBOX_FILE), machine: 'box', session: 's' };
    try {
      const t = await working('restarted', file);
      const taskId = t.s.entry.task.id;
      await expect(updateOrKeep(t.core, t.outbox, taskId, 'done', 'before the restart')).rejects.toMatchObject({ key: 'NATS_UNAVAILABLE' });
      const keptAt = (JSON.parse(readFileSync(file.path, 'utf8')) as { updates: { at: string }[] }).updates[0]!.at;
      expect(JSON.parse(readFileSync(file.path, 'utf8'))).toMatchObject({
        machine: 'box',
        session: 's',
        updates: [{ taskId, key: t.s.key, status: 'done', text: 'before the restart' }],
      });
      // The bridge stops with it kept; its next start (a new view and outbox) finds the ledger back.
      t.outbox.stop();
      const next = loop();
      const outbox = new Outbox(next.core, () => {}, file);
      expect([...(await outbox.restore())]).toEqual([t.s.key]);
      const stored = (await real.ledger.get(t.s.key))!.entry.task;
      expect([stored.status.state, outbox.size, existsSync(file.path), next.view.knows(t.s.key)]).toEqual([
        'TASK_STATE_COMPLETED',
        0,
        false,
        false,
      ]);
      expect(JSON.stringify(stored.artifacts)).toContain('before the restart');
      expect(stored.status.timestamp).toBe(keptAt);
    } finally {
      await dir.remove();
    }
  });

  it('moves aside a file that is not its own outbox, lets go of updates of other tasks, and says so', async () => {
    const dir = await tempDir('shrooms-outbox');
    const file = { path: join(dir.path, OUTBOX_FILE), machine: 'box', session: 's' };
    try {
      const t = loop();
      writeFileSync(file.path, JSON.stringify({ v: 1, machine: 'box', session: 'other', updates: [] }));
      expect((await new Outbox(t.core, () => {}, file).restore()).size).toBe(0);
      expect([existsSync(file.path), existsSync(`${file.path}.bad`)]).toEqual([false, true]);
      expect(t.warned).toEqual([
        `the kept updates in ${file.path} were not read (it is of box/other); moved to ${file.path}.bad, their tasks are delivered again`,
      ]);
      // Of this session, but an update naming another session's task under this one's key.
      const mine = await queued('not-its-key');
      writeFileSync(
        file.path,
        JSON.stringify({
          v: 1,
          machine: 'box',
          session: 's',
          updates: [{ taskId: 'other:x', key: mine.key, status: 'done', text: 'forged' }],
        }),
      );
      expect((await new Outbox(t.core, () => {}, file).restore()).size).toBe(0);
      expect(t.warned.at(-1)).toBe('a kept update not of a task of this session is let go');
      expect([(await real.ledger.get(mine.key))!.entry.task.status.state, existsSync(file.path)]).toEqual(['TASK_STATE_SUBMITTED', false]);
    } finally {
      await dir.remove();
    }
  });
});
