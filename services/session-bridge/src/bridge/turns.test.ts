import { Ledger, transitions } from '@shrooms/ledger';
import { connect } from '@nats-io/transport-node';
import { eventually } from '@shrooms/testing';
import { expect, it } from 'vitest';
import type { Harness } from '../harness/types.js';
import type { Core } from './core.js';
import { TurnLoop, startedTask } from './turns.js';
import { SessionView } from './view.js';
import { standInCore } from '../testing/core.js';
import { useRealLedger } from '../testing/ledger.js';
import { finishTask } from './worker.js';
import { takeIn } from './intake.js';
import { PermissionRelay } from './permissions.js';
import { Recovery } from './recovery.js';

/**
 * The turn loop's turns against a real ledger on a real nats-server. The harness is a stand-in that
 * records the turns it is sent and ends each at once (no model runs here; the e2e tests run the
 * echo harness in a real bridge, where this race was found: test/e2e/limits.test.ts's expiry).
 */
const real = useRealLedger();

/** A session with a stand-in harness whose turns `onTurn` plays (each ends when it returns). */
function session(onTurn: (core: Core, taskId: string) => Promise<void> = async () => {}, writeWaitMs = 100) {
  const view = new SessionView();
  const sent: string[] = [];
  const texts: string[] = [];
  const harness = {
    state: 'idle',
    send: async (_turn: string, text: string, taskId?: string) => {
      sent.push(taskId ?? '');
      texts.push(text);
      harness.state = 'busy';
      try {
        await onTurn(core, taskId ?? '');
      } finally {
        harness.state = 'idle';
      }
      return { status: 'completed', text: '' };
    },
    cancel: async () => {},
    answerPermission: () => {},
  } as unknown as Harness & { state: string };
  const core: Core = standInCore('turns', view, real.ledger, {
    config: { BRIDGE_CWD: '.', BRIDGE_HARNESS: 'echo', BRIDGE_WRITE_WAIT_MS: writeWaitMs },
    harness: () => harness,
    harnessIdle: () => harness.state === 'idle',
  });
  return { view, sent, texts, core, turns: new TurnLoop(core, { fail: async () => undefined }) };
}

it('sends no turn for a task taken away between its start and its turn, and starts the next one', async () => {
  const ledger = real.ledger;
  const { view, sent, core, turns } = session();
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

it("stores a quick worker's start with its result in one write, and a slower one's start on its own", async () => {
  // Read as another process reads them (the gateway): its own connection and ledger.
  const nc = await connect({ servers: real.nats.url });
  const other = await Ledger.open(nc);
  const states = async (key: string) => {
    const s = (await other.get(key))!;
    return [s.revision, ...s.entry.events.flatMap((e) => ('statusUpdate' in e ? [e.statusUpdate.status.state] : []))];
  };
  try {
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const { view, turns } = session(async (core, taskId) => {
      if (taskId.endsWith(':slow')) await slow;
      await core.serial.run(() => finishTask(core, taskId, 'done', 'done'));
    });
    const quick = await real.queued('turns', 'quick');
    view.track(quick);
    await turns.pump();
    await eventually(async () => (await other.get(quick.key))?.entry.task.status.state === 'TASK_STATE_COMPLETED');
    expect(await states(quick.key)).toEqual([quick.revision + 1, 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);

    const slower = await real.queued('turns', 'slow');
    view.track(slower);
    await turns.pump();
    // Its start is written once BRIDGE_WRITE_WAIT_MS has passed without a change of the task.
    await eventually(async () => (await other.get(slower.key))?.entry.task.status.state === 'TASK_STATE_WORKING');
    expect(await states(slower.key)).toEqual([slower.revision + 1, 'TASK_STATE_WORKING']);
    release();
    await eventually(async () => (await other.get(slower.key))?.entry.task.status.state === 'TASK_STATE_COMPLETED');
    expect(await states(slower.key)).toEqual([slower.revision + 2, 'TASK_STATE_COMPLETED']);
  } finally {
    await nc.close();
  }
});

it('stores a new task whose sender waits for its end with its start and result, in one write; one the sender is told of at once, before it is taken in', async () => {
  const nc = await connect({ servers: real.nats.url });
  const other = await Ledger.open(nc);
  const events = async (key: string) =>
    (await other.get(key))!.entry.events.map((e) =>
      'task' in e ? 'task' : 'statusUpdate' in e ? e.statusUpdate.status.state : Object.keys(e)[0],
    );
  const ask = (id: string, awaited: boolean) => ({
    machine: 'box',
    session: 'turns',
    message: { messageId: id, role: 'ROLE_USER' as const, parts: [{ text: id }] },
    origin: { device: 'laptop' },
    metadata: {},
    ...(awaited ? { quiet: true, awaited: true } : {}),
  });
  try {
    const { core, turns } = session(async (core, taskId) => void (await core.serial.run(() => finishTask(core, taskId, 'done', 'done'))));
    const awaited = await takeIn(core, ask('awaited', true), turns);
    expect([awaited.created, awaited.started]).toEqual([true, true]);
    // Not in the ledger yet for anyone else: nobody has been told of it.
    expect(await other.get(awaited.stored.key)).toBeNull();
    await turns.run(awaited.stored);
    await eventually(async () => (await other.get(awaited.stored.key))?.entry.task.status.state === 'TASK_STATE_COMPLETED');
    // One entry carries the events of the create, the start and the result: one write.
    expect(await events(awaited.stored.key)).toEqual(['task', 'TASK_STATE_WORKING', 'artifactUpdate', 'TASK_STATE_COMPLETED']);

    const told = await takeIn(core, ask('told', false), turns);
    expect((await other.get(told.stored.key))?.entry.task.status.state).toBe('TASK_STATE_WORKING');
    await turns.run(told.stored);

    // BRIDGE_WRITE_WAIT_MS 0: nothing is held, an awaited task is stored before it is taken in.
    const atOnce = session(async () => {}, 0);
    const stored = await takeIn(atOnce.core, ask('at-once', true), atOnce.turns);
    expect((await other.get(stored.stored.key))?.entry.task.status.state).toBe('TASK_STATE_WORKING');

    // A wait longer than its sender waits to see the task: held within half of the sender's wait, so
    // the gateway does not take the bridge for gone and queue the task itself.
    const long = session(async () => {}, 600_000);
    const capped = await takeIn(long.core, { ...ask('capped', true), seenWithinMs: 400 }, long.turns);
    expect(await other.get(capped.stored.key)).toBeNull();
    await eventually(async () => (await other.get(capped.stored.key))?.entry.task.status.state === 'TASK_STATE_WORKING');
  } finally {
    await nc.close();
  }
});

/** A worker that finishes each task in its turn. */
const finishing = async (core: Core, taskId: string) => void (await core.serial.run(() => finishTask(core, taskId, 'done', 'done')));

it("delivers a task found working after a restart as the task, in the order asked, though its last message is a permission prompt's allow", async () => {
  const ledger = real.ledger;
  const before = session();
  const older = await real.queued('turns', 'asked-first', 'first things first');
  await new Promise((r) => setTimeout(r, 5)); // asked after it, by the clock the queue goes by
  const allowed = await real.queued('turns', 'allowed', 'deploy the site');
  // The session works on it; its worker asks to run Bash, and the owner allows it.
  const started = await ledger.transition(allowed.key, (e) => transitions.start(e, new Date()));
  startedTask(before.core, started);
  const relay = new PermissionRelay(before.core);
  await relay.ask({ id: 'p1', tool: 'Bash', input: {} });
  const allow = { messageId: 'allow-1', role: 'ROLE_USER' as const, parts: [{ text: 'allow' }] };
  const taskId = allowed.entry.task.id;
  await relay.answer({ machine: 'box', session: 'turns', taskId, message: allow, origin: { device: 'box' }, metadata: {} });
  // The bridge restarts: the task is WORKING, the older one still waits.
  const after = session(finishing);
  const found = (await ledger.get(allowed.key))!;
  await after.core.serial.run(() => new Recovery(after.core, after.turns).recover([found]));
  after.view.track((await ledger.get(older.key))!);
  await after.turns.pump();
  await eventually(() => after.sent.length === 2);
  expect(after.sent).toEqual([older.entry.task.id, taskId]);
  // The task as it was asked, not "more from …: allow".
  expect(after.texts[1]!.split('\n').slice(0, 2)).toEqual([`[shrooms task ${taskId} from laptop]`, 'deploy the site']);
});

it('delivers an answer to a blocked task as that answer, ahead of tasks asked before it', async () => {
  const ledger = real.ledger;
  const { view, sent, texts, turns } = session(finishing);
  const blocked = await real.queued('turns', 'was-blocked', 'which branch?');
  await ledger.transition(blocked.key, (e) => transitions.start(e, new Date()));
  await ledger.transition(blocked.key, (e) => transitions.block(e, 'which branch?', new Date()));
  const waiting = await real.queued('turns', 'waiting', 'later work');
  const answer = { messageId: 'branch', role: 'ROLE_USER' as const, parts: [{ text: 'main' }] };
  view.track(waiting);
  view.track(await ledger.transition(blocked.key, (e) => transitions.answer(e, answer, new Date())));
  await turns.pump();
  await eventually(() => sent.length === 2);
  expect(sent).toEqual([blocked.entry.task.id, waiting.entry.task.id]);
  expect(texts[0]!.split('\n').slice(0, 2)).toEqual([`[shrooms task ${blocked.entry.task.id} — more from laptop]`, 'main']);
});
