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

async function leaving(ledger: Ledger): Promise<void> {
  const key = ledger.key('box', 'slow', 'm-1');
  const entry = transitions.newTask({
    id: 'slow:m-1',
    contextId: 'ctx-1',
    message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'take your time' }] },
    metadata: {},
    queued: false,
    now: new Date(),
  });
  await ledger.create(key, entry);
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
