import { Ledger, intake, transitions } from '@shrooms/ledger';
import type { DeliverRequest } from '@shrooms/protocol';
import { startNatsWithConnection } from '@shrooms/testing';
import { expect, it } from 'vitest';
import { standInCore } from '../testing/core.js';
import { useRealLedger } from '../testing/ledger.js';
import { takeIn } from './intake.js';
import { Recovery } from './recovery.js';
import { TurnLoop } from './turns.js';
import { SessionView } from './view.js';

/**
 * The intake of a new task for a busy session, whose create is written outside the bridge's lock,
 * against a real ledger on a real nats-server. The ledger's create is held after it is stored (the
 * test lets it answer) so that a change can land while the write is out; spans, harness and log are
 * stand-ins.
 */
const real = useRealLedger();

function busySession() {
  let release!: () => void;
  let stored!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const written = new Promise<void>((r) => (stored = r));
  const ledger: Ledger = Object.create(real.ledger);
  ledger.create = async (key, entry) => {
    const created = await real.ledger.create(key, entry);
    stored();
    await held;
    return created;
  };
  const view = new SessionView();
  view.start({ key: 'box.intake.busy', taskId: 'intake:busy' }, 'TASK_STATE_WORKING');
  const core = standInCore('intake', view, ledger);
  const turns = new TurnLoop(core, { fail: async () => undefined });
  const recovery = new Recovery(core, turns);
  return { core, view, recovery, turns, release, written };
}

const ask = (id: string): DeliverRequest => ({
  machine: 'box',
  session: 'intake',
  message: { messageId: id, role: 'ROLE_USER', parts: [{ text: id }] },
  origin: { device: 'laptop' },
  metadata: {},
});

it('holds a place in the room while the create is out, and queues the task once it is stored', async () => {
  const s = busySession();
  const taking = takeIn(s.core, ask('waits'), s.turns);
  await s.written;
  expect([s.view.arriving, s.view.waiting, s.view.queued]).toEqual([1, 1, 0]);
  s.release();
  const r = await taking;
  expect([r.created, r.started, r.stored.entry.task.status.state]).toEqual([true, false, 'TASK_STATE_SUBMITTED']);
  expect([s.view.arriving, s.view.queued]).toEqual([0, 1]);
});

it('reads again a task canceled while its create was out, and does not queue it', async () => {
  const s = busySession();
  const taking = takeIn(s.core, ask('canceled-meanwhile'), s.turns);
  await s.written;
  const key = real.ledger.key('box', 'intake', 'canceled-meanwhile');
  // Its asker cancels it; the bridge's watch brings the change while the intake's write is out.
  const canceled = await real.ledger.transition(key, (e) => transitions.cancel(e, 'its asker', new Date()));
  await s.core.serial.run(() => s.recovery.reconcile(canceled));
  s.release();
  const r = await taking;
  expect([r.created, r.stored.entry.task.status.state]).toEqual([true, 'TASK_STATE_CANCELED']);
  expect([s.view.arriving, s.view.queued, s.view.knows(key)]).toEqual([0, 0, false]);
});

it('takes up a task the gateway queued first, which its own create found, touched while the write was out', async () => {
  const s = busySession();
  // The gateway queued it in the ledger itself (this bridge was slow to answer its delivery).
  const first = await real.queued('intake', 'queued-first', 'queued-first');
  const taking = takeIn(s.core, ask('queued-first'), s.turns);
  await s.written;
  // The gateway's create comes through the bridge's watch while the intake's write is out.
  await s.core.serial.run(() => s.recovery.reconcile(first));
  s.release();
  const r = await taking;
  expect([r.created, r.stored.entry.task.status.state]).toEqual([false, 'TASK_STATE_SUBMITTED']);
  expect([s.view.arriving, s.view.queued, s.view.knows(first.key)]).toEqual([0, 1, true]);
});

it('drops a blocking send the full ledger refuses when its held create is written, cancelling its turn, and never writes it', async () => {
  // A server of its own: the bucket's limit is set when it is made.
  const server = await startNatsWithConnection();
  try {
    const ledger = await Ledger.open(server.nc, { limits: { retainedTasks: 1 } });
    expect((await intake(ledger, ask('filler'), { queued: true })).created).toBe(true);
    let cancels = 0;
    const harness = { state: 'idle', cancel: async () => void (cancels++, (harness.state = 'idle')) };
    const view = new SessionView();
    const core = standInCore('intake', view, ledger, {
      // Held until this test writes it.
      config: { BRIDGE_WRITE_WAIT_MS: 600_000 },
      harness: () => harness,
      harnessIdle: () => harness.state === 'idle',
    });
    const turns = new TurnLoop(core, { fail: async () => undefined });
    const r = await takeIn(core, { ...ask('refused'), quiet: true, awaited: true }, turns);
    expect([r.created, r.started, view.isCurrent(r.stored.key)]).toEqual([true, true, true]);
    harness.state = 'busy'; // its turn began
    await expect(ledger.writeDeferred(r.stored.key)).rejects.toMatchObject({ key: 'LIMIT_EXCEEDED', details: { limit: 'retainedTasks' } });
    // The drop is queued behind the lock: a later section sees it done.
    await core.serial.run(async () => {});
    expect([view.knows(r.stored.key), view.current, cancels]).toEqual([false, undefined, 1]);
    // Room comes back (the owner raises the limit): the refused task is not written.
    await Ledger.open(server.nc, { limits: { retainedTasks: 10 }, owner: true });
    await ledger.writeDeferred();
    expect(await ledger.get(r.stored.key)).toBeNull();
  } finally {
    await server.stop();
  }
});
