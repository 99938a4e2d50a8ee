/**
 * Recovery: after a (re)start the tasks that were working are delivered again, up to
 * `BRIDGE_REDELIVERIES`, then failed; the view is rebuilt from the ledger; changes others make to
 * the session's tasks (gateway fallback intake, expiry, a cancel) are taken in; a harness that
 * dies is restarted with resume.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { META, isTerminal, type Task } from '@shrooms/protocol';
import { transitions, type LedgerEntry, type Stored } from '@shrooms/ledger';
import type { Core } from './core.js';
import type { TurnLoop } from './turns.js';

/** Waits between tries to start a harness that did not start again: the first, doubled after each failure up to the most (ms). */
export interface RestartBackoff {
  firstMs: number;
  maxMs: number;
}

export class Recovery {
  constructor(
    private readonly c: Core,
    private readonly turns: TurnLoop,
    /** A task of the session was canceled by someone else (the gateway while the bridge was away, expiry): the cascade. */
    private readonly canceled: (task: Task) => void = () => {},
    private readonly backoff: RestartBackoff = { firstMs: 1_000, maxMs: 60_000 },
  ) {}

  /**
   * Tasks as found at start (or the one a dead harness left working); returns the keys of those
   * queued again. `lost` says why the conversation they were in is gone, when it is. Run under the lock.
   */
  async recover(found: Stored[], lost?: string): Promise<string[]> {
    const again: string[] = [];
    const c = this.c;
    for (const s of found) {
      const t = s.entry.task;
      if (!deliverAgain(t)) {
        c.view.track(s);
        continue;
      }
      const n = Number(t.metadata?.[META.redeliveries] ?? 0);
      const now = new Date();
      if (n >= c.config.BRIDGE_REDELIVERIES) {
        await c.ledger
          .transition(s.key, (e) => transitions.fail(e, `the session stopped ${n + 1} times while working on this task`, now))
          .catch(() => {});
        continue;
      }
      const back = await c.ledger.transition(s.key, (e) => requeue(e, n + 1, now, lost));
      c.view.track(back);
      // Finished or changed by someone else since it was read (a cancel, expiry): left as it is.
      if (back.entry.task.status.state !== 'TASK_STATE_SUBMITTED') continue;
      c.log.info({ taskId: t.id, redelivery: n + 1 }, 'delivering a task again after a restart');
      again.push(s.key);
    }
    c.changed();
    return again;
  }

  /** A change someone else made to one of the session's tasks. Run under the lock. */
  async reconcile(s: Stored): Promise<void> {
    const c = this.c;
    // A new task still being written by intake: it reads the task again when its write is done.
    if (c.view.touch(s.key)) return;
    const t = s.entry.task;
    if (isTerminal(t.status.state)) {
      if (c.view.knows(s.key)) {
        await this.turns.drop(s.key);
        this.canceled(t);
      }
      return;
    }
    if ((t.status.state === 'TASK_STATE_SUBMITTED' && !c.view.placed(s.key)) || unrun(c, s)) {
      // The change may be old by now (it waited for the lock): read the task again, at the
      // watched revision or later. When no replica has it yet, the change itself is acted on — safe,
      // as the turn loop starts a task by compare-and-set and lets it go when it has finished.
      const fresh = await c.ledger.get(s.key, { atLeast: s.revision }).catch(() => s);
      if (fresh && takeUp(c, fresh)) void this.turns.pump();
    }
  }

  /** The harness died: its task goes back per policy, the harness starts again (resuming). */
  async harnessExited(code: number | null): Promise<void> {
    const c = this.c;
    if (c.stopping()) return;
    c.log.warn({ code }, 'harness exited; restarting it');
    let again: string[] = [];
    await c.serial.run(async () => {
      const cur = c.view.clearCurrent();
      if (!cur) return;
      try {
        const stored = await c.ledger.get(cur.key);
        // Whether the conversation goes on is known only once the harness has started again (below);
        // the harness's conversationLost still speaks of its previous start, so none is passed here.
        if (stored && deliverAgain(stored.entry.task)) again = await this.recover([stored]);
      } catch (err) {
        // The ledger away (past its own retries): the task waits first in the queue, and the turn
        // loop starts it again once the ledger takes the start.
        c.log.warn(
          { err, taskId: cur.taskId },
          'the ledger did not answer for the task of the harness that exited; it waits first in the queue',
        );
        c.view.putBack({ key: cur.key, taskId: cur.taskId, answer: false, askedAt: 0 });
      }
    });
    if (!(await this.startHarness())) return;
    const lost = c.harness().conversationLost;
    if (lost && again.length)
      await c.serial.run(async () => {
        for (const key of again)
          await c.ledger.transition(key, (e) => transitions.annotate(e, { [META.conversationLost]: lost })).catch(() => {});
      });
    void this.turns.pump();
  }

  /**
   * Starts the harness again until it runs (true) or the bridge stops (false). A harness that did
   * not start is not started by anything else: given up, the session would sit dead with its queue
   * waiting until expiry (a CLI that cannot start for a while: its binary being replaced, the disk full).
   */
  private async startHarness(): Promise<boolean> {
    const c = this.c;
    for (let wait = this.backoff.firstMs; !c.stopping(); wait = Math.min(wait * 2, this.backoff.maxMs)) {
      try {
        await c.harness().start();
        return true;
      } catch (err) {
        if (c.stopping()) break;
        c.log.error({ err, retryInMs: wait }, 'harness restart failed; trying again');
      }
      await sleep(wait, undefined, { ref: false });
    }
    return false;
  }
}

/**
 * Whether a task found at a (re)start was in a turn that the harness took with it, and goes back to
 * the session: WORKING, or waiting on a permission prompt (the prompt was the dead CLI's: nobody can
 * answer it now; delivered again, the session asks again). Not a stalled task: it was let go before
 * (the session took the next one, the owner was told) and stays open and set aside, as it was.
 */
function deliverAgain(t: Task): boolean {
  if (t.metadata?.[META.stalled]) return false;
  return t.status.state === 'TASK_STATE_WORKING' || (t.status.state === 'TASK_STATE_INPUT_REQUIRED' && !!t.metadata?.[META.permission]);
}

/** A task stored WORKING that the view does not know: nobody runs it (see takeUp). */
const unrun = (c: Core, s: Stored) => s.entry.task.status.state === 'TASK_STATE_WORKING' && !c.view.knows(s.key);

/**
 * Takes into the view an open task of the session that waits for it and is not placed: SUBMITTED
 * (the gateway queued it while the bridge was away), or WORKING and unknown — this bridge's own
 * create-and-start or start whose write failed as far as it could tell (a timeout while a stream
 * leader was elected, a read-back from a replica that lagged) but was stored: the gateway has
 * acknowledged it, and no turn will ever run it unless it is queued again. True when it was taken.
 * Run under the lock.
 */
export function takeUp(c: Core, s: Stored): boolean {
  const state = s.entry.task.status.state;
  if (state === 'TASK_STATE_SUBMITTED' && !c.view.placed(s.key)) {
    c.view.track(s);
    return true;
  }
  if (!unrun(c, s)) return false;
  c.log.warn({ taskId: s.entry.task.id }, 'taking up a task stored WORKING that this bridge never started; it waits in the queue');
  c.view.adopt(s);
  return true;
}

/**
 * WORKING (or waiting on a dead prompt) → SUBMITTED (queued again), counting the redelivery (and
 * saying when the conversation is new); null (nothing written) for a task that is neither as
 * stored: nothing reopens a finished one.
 */
function requeue(e: LedgerEntry, n: number, now: Date, lost?: string): LedgerEntry | null {
  if (!deliverAgain(e.task)) return null;
  const task = structuredClone(e.task);
  task.status = { state: 'TASK_STATE_SUBMITTED', timestamp: now.toISOString() };
  task.metadata = { ...task.metadata, [META.queued]: true, [META.redeliveries]: n, ...(lost ? { [META.conversationLost]: lost } : {}) };
  delete task.metadata[META.permission];
  return {
    v: e.v + 1,
    task,
    events: [{ statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: { [META.redeliveries]: n } } }],
  };
}
