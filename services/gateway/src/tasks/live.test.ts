/** A blocking wait follows its client: when the client goes, the wait ends with what it has then. */
import { expect, it } from 'vitest';
import { isTerminal } from '@shrooms/protocol';
import { Ledger, transitions } from '@shrooms/ledger';
import { startNatsWithConnection } from '@shrooms/testing';
import { LiveTasks, type ClientGone } from './live.js';

it('ends a blocking wait with the task as it stands when its client goes, and stops following the client', async () => {
  const nats = await startNatsWithConnection();
  try {
    await leaving(await Ledger.open(nats.nc));
  } finally {
    await nats.stop();
  }
});

it('reads a key on one timer however many wait on it, and ends each wait with what the read brings', async () => {
  const nats = await startNatsWithConnection();
  try {
    const ledger = await Ledger.open(nats.nc);
    const { key } = await slowTask(ledger, 'shared');
    // No watch runs here: only the refresh can tell the waiters of the change.
    const live = new LiveTasks(ledger, 'box', undefined, undefined, 20);
    const waits = Array.from({ length: 3 }, () => live.waitFor(key, (e) => isTerminal(e.task.status.state), 600_000));
    const stopOther = live.refreshEvery(key);
    expect(live.refreshedKeys).toBe(1);
    await ledger.transition(key, (e) => transitions.complete(transitions.start(e, new Date()), 'done', new Date()));
    const ended = await Promise.all(waits);
    expect(ended.map((s) => s?.entry.task.status.state)).toEqual(Array(3).fill('TASK_STATE_COMPLETED'));
    expect(live.refreshedKeys).toBe(1);
    stopOther();
    stopOther();
    expect(live.refreshedKeys).toBe(0);
  } finally {
    await nats.stop();
  }
});

async function leaving(ledger: Ledger): Promise<void> {
  const { key, entry } = await slowTask(ledger, 'm-1');
  const live = new LiveTasks(ledger, 'box');
  let leave: (() => void) | undefined;
  let followed = 0;
  const gone: ClientGone = (then) => {
    followed++;
    leave = then;
    return () => {
      followed--;
      leave = undefined;
    };
  };
  let read = false;
  const first = async () => {
    const s = await ledger.get(key);
    read = true;
    return s;
  };
  // The task never finishes: only the client's leaving can end this wait before its ten minutes.
  const waiting = live.waitFor(key, (e) => isTerminal(e.task.status.state), 600_000, gone, first);
  await expect.poll(() => read && leave !== undefined).toBe(true);
  leave!();
  const out = await waiting;
  expect(out?.entry.task.id).toBe('slow:m-1');
  expect(out?.entry.task.status.state).toBe(entry.task.status.state);
  expect(followed).toBe(0);
}

/** A task of session `slow` stored as asked, at work. */
async function slowTask(ledger: Ledger, id: string) {
  const key = ledger.key('box', 'slow', id);
  const entry = transitions.newTask({
    id: `slow:${id}`,
    contextId: `ctx-${id}`,
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text: 'take your time' }] },
    metadata: {},
    queued: false,
    now: new Date(),
  });
  await ledger.create(key, entry);
  return { key, entry };
}
