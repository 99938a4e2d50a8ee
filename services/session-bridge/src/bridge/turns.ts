/**
 * The turn loop: when the session is free it starts the next queued task (SUBMITTED → WORKING) and
 * hands it to the harness as one turn; when a turn ends it looks for the next. Also the turns
 * without a task of their own (reminders) and taking a task away from the session (cancel, stall).
 */
import { META, ShroomsError } from '@shrooms/protocol';
import { transitions, type Stored } from '@shrooms/ledger';
import { humanDuration } from '@shrooms/runtime';
import { deliverAttachments } from '../attachments.js';
import { answerText, deliveryText, isAnswer } from '../prompt.js';
import { watchdogFirstMs } from '../config.js';
import type { Core } from './core.js';

/** Wait before starting the next task again after its start failed (the ledger retried for long already). */
export const START_RETRY_MS = 2_000;

/**
 * A task the session works on from now: its key and the entry its start made of it; `answer` when
 * an answer to it queued it (prompt.ts isAnswer, read before the start drops its mark).
 */
export type Started = Pick<Stored, 'key' | 'entry'> & { answer?: boolean };

export interface TurnLoopHooks {
  /** Fails the task the way the worker would (`task_update failed`), when its turn failed. */
  fail(taskId: string, text: string): Promise<unknown>;
}

export class TurnLoop {
  /** Tasks whose status message says the model endpoint fails (taken away once the model speaks). */
  private readonly troubled = new Set<string>();
  /** A start tried again after a failed one (pump). */
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly c: Core,
    private readonly hooks: TurnLoopHooks,
  ) {}

  /**
   * Starts the next task when the session is free. Never rejects (its callers do not wait for it): a
   * start the ledger did not take — NATS or JetStream away past the ledger's own retries — puts the
   * task back and is tried again after START_RETRY_MS.
   */
  async pump(): Promise<void> {
    const c = this.c;
    let next: Started | undefined;
    try {
      next = await this.startNext();
    } catch (err) {
      c.log.warn({ err }, `the next task could not be started; trying again in ${START_RETRY_MS / 1000} s`);
      if (!this.retry)
        this.retry = setTimeout(() => {
          this.retry = undefined;
          void this.pump();
        }, START_RETRY_MS).unref();
      return;
    }
    if (next) void this.run(next);
  }

  private startNext(): Promise<Started | undefined> {
    const c = this.c;
    return c.serial.run(async () => {
      if (c.stopping() || c.view.busy(c.harnessIdle())) return undefined;
      for (let q = c.view.next(); q; q = c.view.next()) {
        try {
          const s = await this.begin(q.key);
          startedTask(c, s);
          return s;
        } catch (err) {
          if (err instanceof ShroomsError) {
            // Finished or gone meanwhile: the view lets it go (a stale read may have queued it).
            if (err.key === 'UNSUPPORTED_OPERATION' || err.key === 'TASK_NOT_FOUND') c.view.forget(q.key);
            continue;
          }
          c.view.putBack(q);
          throw err;
        }
      }
      return undefined;
    });
  }

  /**
   * SUBMITTED → WORKING, its write held back for BRIDGE_WRITE_WAIT_MS (Ledger.deferTransition): a
   * worker that finishes within it has its start stored with its result, in one write; any other
   * change of the task meanwhile takes it along too. The session works on the task from the start
   * regardless; only the ledger says WORKING up to this much later. Written at once for a task
   * with files to put into the session (a bridge that fails on them has the start on record, and
   * its restarts count as redeliveries), and when the wait is 0.
   */
  private async begin(key: string): Promise<Started> {
    const c = this.c;
    const now = new Date();
    let answer: boolean | undefined;
    const entry = await c.ledger.deferTransition(
      key,
      (e) => {
        // Of the entry the returned start is made from: the last one it was applied to before it returns.
        answer = isAnswer(e.task);
        return transitions.start(e, now);
      },
      c.config.BRIDGE_WRITE_WAIT_MS,
      (err) => {
        const gone = err instanceof ShroomsError && (err.key === 'UNSUPPORTED_OPERATION' || err.key === 'TASK_NOT_FOUND');
        if (!gone) c.log.warn({ err, key }, "a task's start was not written; the ledger shows it waiting until its next change");
      },
    );
    if (!entry) throw new ShroomsError('INTERNAL', `starting ${key} changed nothing`);
    const started = { key, entry, answer: answer === true };
    if (entry.task.history?.some((m) => m.parts.some((p) => !('text' in p)))) await c.ledger.writeDeferred(key);
    return started;
  }

  /** Runs the turn of a task the view has just started (`startedTask`), then looks for the next. */
  async run(s: Started): Promise<void> {
    const c = this.c;
    const task = s.entry.task;
    const turnId = `${task.id}#${s.entry.v}`;
    try {
      const answer = s.answer === true;
      const message = answer ? task.history?.[task.history.length - 1] : task.history?.[0];
      let attached: string[];
      try {
        attached = await deliverAttachments(c.config.BRIDGE_CWD, task.id, message);
      } catch (err) {
        await this.hooks.fail(task.id, `its files could not be written into the session: ${(err as Error).message}`).catch(() => {});
        return;
      }
      // Taken away while its turn was being made ready (expiry or a cancel landed after the start):
      // the harness was idle, so no turn was there to cancel; sending one now would hold the session
      // on a finished task.
      if (!c.view.isCurrent(s.key)) return;
      const text = answer ? answerText(task, attached) : deliveryText(task, attached);
      const lines = c.activity.lines;
      lines.begin(s.key);
      const r = await c
        .harness()
        .send(turnId, text, task.id)
        .finally(() => lines.end());
      if (r.text && c.view.knows(s.key)) lines.keep(s.key, r.text);
      if (r.status === 'failed' && c.view.isCurrent(s.key)) {
        c.log.warn({ taskId: task.id, error: r.error }, "the session's turn failed; failing its task");
        await this.hooks.fail(task.id, `the session's turn failed: ${r.error ?? r.text}`).catch(() => {});
      } else if (c.view.isCurrent(s.key)) {
        // The turn ended and the task is still open: the worker did not call task_update (yet).
        const line = lines.of(s.key);
        const wait = humanDuration(watchdogFirstMs(c.config));
        const why = `the session's turn ended without task_update; the task stays open and the session is reminded after ${wait} of quiet`;
        await c.ledger
          .transition(s.key, (e) => transitions.note(e, why, new Date(), line ? { [META.lastWorkerLine]: line } : {}))
          .catch(() => {});
      }
    } catch (err) {
      c.log.warn({ err, taskId: task.id }, 'turn ended abnormally');
    } finally {
      this.troubled.delete(s.key);
      if (!c.view.knows(s.key)) c.activity.lines.forget(s.key);
      c.changed();
      void this.pump();
    }
  }

  /**
   * A reminder turn about the task `key` (what the session says in it counts for that task); the
   * watchdog sends it only when the harness is idle.
   */
  async remind(key: string, text: string): Promise<void> {
    const c = this.c;
    const lines = c.activity.lines;
    try {
      lines.begin(key);
      const r = await c
        .harness()
        .send(`reminder-${Date.now()}`, text)
        .finally(() => lines.end());
      if (r.text && c.view.knows(key)) lines.keep(key, r.text);
    } finally {
      c.activity.lastActivityAt = Date.now();
      c.changed();
      void this.pump();
    }
  }

  /**
   * The model endpoint answers errors and the harness retries: a warning in the log and, on the
   * task the turn works on, a status message saying so (the task stays WORKING).
   */
  async trouble(what: string): Promise<void> {
    const c = this.c;
    const key = c.activity.lines.turn;
    const taskId = key ? c.view.current?.taskId : undefined;
    c.log.warn({ ...(taskId ? { taskId } : {}) }, what);
    if (!key) return;
    this.troubled.add(key);
    await c.ledger
      .transition(key, (e) => transitions.note(e, what, new Date()))
      .catch((err) => c.log.debug({ err }, 'no note on the task'));
  }

  /** The model spoke: a note that it failed is no longer true. */
  async spoke(): Promise<void> {
    const key = this.c.activity.lines.turn;
    if (!key || !this.troubled.delete(key)) return;
    await this.c.ledger.transition(key, (e) => transitions.note(e, '', new Date())).catch(() => {});
  }

  /** Frees the session from a stalled task (it stays open) so the queue moves on. */
  async release(key: string): Promise<void> {
    await this.c.serial.run(async () => void this.c.view.clearCurrent(key));
    this.c.changed();
    void this.pump();
  }

  /**
   * Drops a task from the view; a turn that works on it is cancelled, and one about to begin is not
   * sent (`run`). Run under the lock.
   */
  async drop(key: string): Promise<void> {
    const c = this.c;
    c.activity.lines.forget(key);
    if (c.view.forget(key)) {
      const h = c.harness();
      if (h.state === 'busy' || h.state === 'waiting') await h.cancel().catch((err) => c.log.warn({ err }, 'cancel failed'));
    }
    c.changed();
  }
}

/** The session works on `s` from now (stored WORKING): the view's current task. Run under the lock. */
export function startedTask(c: Core, s: Started): void {
  const tp = s.entry.task.metadata?.[META.traceparent];
  c.view.start({ key: s.key, taskId: s.entry.task.id, ...(typeof tp === 'string' ? { traceparent: tp } : {}) }, s.entry.task.status.state);
  c.changed();
}
