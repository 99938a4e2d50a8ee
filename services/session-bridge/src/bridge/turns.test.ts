import { Ledger, intake, transitions } from '@shrooms/ledger';
import { eventually, startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Core } from './core.js';
import { Serial } from './serial.js';
import { START_RETRY_MS, TurnLoop } from './turns.js';
import { SessionView } from './view.js';

/**
 * The turn loop against a real ledger on a real nats-server; the session around it (harness, log,
 * presence) is a stand-in, as no turn is run: what is tested is which queued task it starts.
 */
let nats: NatsWithConnection;
let ledger: Ledger;
beforeAll(async () => {
  nats = await startNatsWithConnection();
  ledger = await Ledger.open(nats.nc);
});
afterAll(async () => nats?.stop());

/** A task queued the way the gateway queues one while the bridge is away. */
const queued = (id: string) =>
  intake(
    ledger,
    {
      machine: 'box',
      session: 's',
      message: { messageId: id, role: 'ROLE_USER', parts: [{ text: 'hi' }] },
      origin: { device: 'laptop' },
      metadata: {},
    },
    { queued: true },
  ).then((r) => r.stored);

function loop() {
  const view = new SessionView();
  const warned: string[] = [];
  const core = {
    view,
    ledger,
    serial: new Serial(),
    stopping: () => false,
    harnessIdle: () => true,
    changed: () => {},
    log: { warn: (_o: unknown, m: string) => void warned.push(m), info: () => {}, debug: () => {} },
  } as unknown as Core;
  return { view, core, warned, turns: new TurnLoop(core, { fail: async () => undefined }) };
}

describe('TurnLoop.pump', () => {
  it('lets go of a queued task found finished or gone, and starts the next one', async () => {
    const { view, turns } = loop();
    const canceled = await queued('canceled');
    // Queued from a read that was stale: the task was canceled since.
    view.track(canceled);
    await ledger.transition(canceled.key, (e) => transitions.cancel(e, 'its asker', new Date()));
    // Queued, and the ledger no longer holds it at all.
    view.track({ ...canceled, key: ledger.key('box', 's', 'gone') });
    const waiting = await queued('waiting');
    view.track(waiting);
    expect([view.queued, view.openCount]).toEqual([3, 3]);
    const run = new Promise<string>((resolve) => (turns.run = async (s) => resolve(s.key)));
    await turns.pump();
    expect(await run).toBe(waiting.key);
    expect((await ledger.get(waiting.key))!.entry.task.status.state).toBe('TASK_STATE_WORKING');
    // The two are forgotten, not put back: they count open no more and never come up again.
    expect([view.queued, view.openCount, view.knows(canceled.key), view.current?.key]).toEqual([0, 1, false, waiting.key]);
  });

  it('does not reject when the ledger does not take a start: the task waits, and is started once it does', async () => {
    const { view, core, warned, turns } = loop();
    const task = await queued('outage');
    view.track(task);
    // The ledger as a bridge meets it when NATS is gone: its connection closed, every call refused.
    const away = await connect({ servers: nats.url });
    (core as { ledger: Ledger }).ledger = await Ledger.open(away);
    await away.close();
    const started: string[] = [];
    turns.run = async (s) => void started.push(s.key);
    await expect(turns.pump()).resolves.toBeUndefined();
    expect([view.queued, started, warned]).toEqual([
      1,
      [],
      [`the next task could not be started; trying again in ${START_RETRY_MS / 1000} s`],
    ]);
    // NATS back: the retry starts it without anyone calling pump again.
    (core as { ledger: Ledger }).ledger = ledger;
    await eventually(() => started.length > 0, START_RETRY_MS * 5);
    expect(started).toEqual([task.key]);
    expect((await ledger.get(task.key))!.entry.task.status.state).toBe('TASK_STATE_WORKING');
  });
});
