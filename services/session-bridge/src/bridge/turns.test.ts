import { transitions } from '@shrooms/ledger';
import { eventually } from '@shrooms/testing';
import { expect, it } from 'vitest';
import type { Harness } from '../harness/types.js';
import type { Core } from './core.js';
import { WorkerLines } from './lines.js';
import { Serial } from './serial.js';
import { TurnLoop, startedTask } from './turns.js';
import { SessionView } from './view.js';
import { useRealLedger } from '../testing/ledger.js';

/**
 * The turn loop's turns against a real ledger on a real nats-server. The harness is a stand-in that
 * records the turns it is sent and ends each at once (no model runs here; the e2e tests run the
 * echo harness in a real bridge, where this race was found: test/e2e/limits.test.ts's expiry).
 */
const real = useRealLedger();

it('sends no turn for a task taken away between its start and its turn, and starts the next one', async () => {
  const ledger = real.ledger;
  const view = new SessionView();
  const sent: string[] = [];
  const harness = {
    state: 'idle',
    send: async (_turn: string, _text: string, taskId?: string) => {
      sent.push(taskId ?? '');
      return { status: 'completed', text: '' };
    },
    cancel: async () => {},
  } as unknown as Harness;
  const core = {
    machine: 'box',
    session: 'turns',
    view,
    ledger,
    config: { BRIDGE_CWD: '.', BRIDGE_HARNESS: 'echo' },
    activity: { lines: new WorkerLines() },
    serial: new Serial(),
    harness: () => harness,
    harnessIdle: () => harness.state === 'idle',
    stopping: () => false,
    changed: () => {},
    log: { warn: () => {}, info: () => {}, debug: () => {} },
  } as unknown as Core;
  const turns = new TurnLoop(core, { fail: async () => undefined });
  const first = await real.queued('turns', 'taken-away');
  const next = await real.queued('turns', 'next');
  view.track(next);
  // The session starts the first task; before its turn is sent, expiry cancels it and the bridge
  // drops it — the harness is still idle, so there is no turn to cancel.
  const started = await ledger.transition(first.key, (e) => transitions.start(e, new Date()));
  startedTask(core, started);
  await ledger.transition(first.key, (e) => transitions.expire(e, new Date()));
  await core.serial.run(() => turns.drop(first.key));
  await turns.run(started);
  await eventually(() => sent.length > 0);
  expect(sent).toEqual([next.entry.task.id]);
  expect((await ledger.get(next.key))!.entry.task.status.state).toBe('TASK_STATE_WORKING');
});
