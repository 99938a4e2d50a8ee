/**
 * The worker's own act: `task_update` (done → COMPLETED, blocked → INPUT_REQUIRED, failed →
 * FAILED; and for the tck harness only, rejected → REJECTED, auth_required → AUTH_REQUIRED), with
 * the worker's last line kept on the task. One path for every caller — the MCP tools
 * the bridge hosts, the echo harness, the `update` endpoint, a failed turn.
 */
import { META, ShroomsError, isInterrupted, withFields, type Part } from '@shrooms/protocol';
import { localTaskKey, transitions, type LedgerEntry, type Stored } from '@shrooms/ledger';
import { isNatsOutage, natsUnavailable } from '@shrooms/runtime';
import type { Core } from './core.js';
import type { HarnessUpdateStatus } from '../harness/types.js';
import type { Outbox } from './outbox.js';

/** Run under the lock. `taskId` is `SESSION:ID` (or `MACHINE/SESSION:ID`) of a task of this session. */
/** `at`: when the worker said it (an update kept while the ledger was away is written later). */
export async function finishTask(
  c: Core,
  taskId: string,
  status: HarnessUpdateStatus,
  text: string,
  parts: Part[] = [],
  at = new Date(),
): Promise<Stored> {
  let key: string;
  try {
    key = localTaskKey(c.ledger, c.machine, c.session, taskId);
  } catch {
    throw new ShroomsError('UPDATE_FORBIDDEN', `task ${taskId} is not a task of ${c.machine}/${c.session}`);
  }
  const now = at;
  const line = c.activity.lines.of(key);
  const md = line ? { [META.lastWorkerLine]: line } : {};
  let s: Stored;
  try {
    s = await c.ledger.transition(key, (e) => {
      if (status === 'done') return transitions.complete(withMeta(e, md), text, now, parts);
      if (status === 'blocked') return transitions.block(e, text, now, md);
      if (status === 'auth_required') return transitions.needAuth(e, text, now, md);
      if (status === 'rejected') return transitions.reject(e, text, now);
      return transitions.fail(e, text, now, md);
    });
  } catch (err) {
    if (err instanceof ShroomsError && err.key === 'TASK_NOT_FOUND')
      throw new ShroomsError('TASK_NOT_FOUND', `no task ${taskId} on ${c.machine}/${c.session}`);
    throw err;
  }
  const open = isInterrupted(s.entry.task.status.state);
  c.view.updated(key, s.entry.task.status.state, open);
  if (!open) c.activity.lines.forget(key);
  return s;
}

/**
 * `finishTask` for the worker: an update the ledger does not take for want of NATS or JetStream is
 * kept (`outbox`) and written when the ledger answers; the worker is told so, as a retryable
 * NATS_UNAVAILABLE that says it need not send it again.
 */
export async function updateOrKeep(
  c: Core,
  outbox: Outbox,
  taskId: string,
  status: HarnessUpdateStatus,
  text: string,
  parts?: Part[],
): Promise<Stored> {
  const at = new Date();
  try {
    const s = await c.serial.run(() => finishTask(c, taskId, status, text, parts, at));
    // Said again and written: an update kept before for the task is no longer the last word.
    outbox.forget(taskId);
    return s;
  } catch (err) {
    if (!isNatsOutage(err)) throw err;
    const key = localTaskKey(c.ledger, c.machine, c.session, taskId);
    await c.serial.run(async () => outbox.keep(taskId, { key, status, text, at: at.toISOString(), ...(parts ? { parts } : {}) }));
    throw natsUnavailable(
      `the ledger did not answer; this update of ${taskId} is kept and written when it answers — no need to send it again`,
    );
  }
}

function withMeta(e: LedgerEntry, md: Record<string, unknown>): LedgerEntry {
  return Object.keys(md).length ? withFields(e, { task: withFields(e.task, { metadata: withFields(e.task.metadata ?? {}, md) }) }) : e;
}
