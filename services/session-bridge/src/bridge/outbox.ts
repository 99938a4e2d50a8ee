/**
 * The worker's updates the ledger did not take — NATS or JetStream away past the ledger's own
 * retries (about 50 s), e.g. a machine cut off from the mesh. Each is kept in memory and written
 * when the ledger answers again, so a result is not lost to an outage and the session is not held
 * for a day (the task's deadline) by a task it has finished. One update per task: a later one
 * replaces it. Kept updates go with the bridge process; its next start delivers their tasks again
 * (they are still WORKING in the ledger).
 */
import type { Part, TaskState } from '@shrooms/protocol';
import { isInterrupted } from '@shrooms/protocol';
import { isNatsOutage } from '@shrooms/runtime';
import type { HarnessUpdateStatus } from '../harness/types.js';
import type { Core } from './core.js';
import { finishTask } from './worker.js';

/** First wait before writing the kept updates again; it doubles while the ledger stays away. */
export const OUTBOX_FIRST_RETRY_MS = 1_000;
const OUTBOX_MAX_RETRY_MS = 15_000;

const STATE_OF: Record<HarnessUpdateStatus, TaskState> = {
  done: 'TASK_STATE_COMPLETED',
  blocked: 'TASK_STATE_INPUT_REQUIRED',
  failed: 'TASK_STATE_FAILED',
  rejected: 'TASK_STATE_REJECTED',
  auth_required: 'TASK_STATE_AUTH_REQUIRED',
};

interface Kept {
  key: string;
  status: HarnessUpdateStatus;
  text: string;
  parts?: Part[];
}

export class Outbox {
  private readonly kept = new Map<string, Kept>();
  private timer?: NodeJS.Timeout;
  private delayMs = OUTBOX_FIRST_RETRY_MS;

  constructor(
    private readonly c: Core,
    /** A kept update was written or let go: the session may move on. */
    private readonly settled: () => void,
  ) {}

  /** Updates waiting for the ledger. */
  get size(): number {
    return this.kept.size;
  }

  /** Keeps the update of task `taskId` (its ledger key `key`); the view takes it as said. Run under the lock. */
  keep(taskId: string, u: Kept): void {
    this.kept.set(taskId, u);
    const state = STATE_OF[u.status];
    this.c.view.updated(u.key, state, isInterrupted(state));
    this.c.log.warn(
      { taskId, status: u.status },
      "the ledger did not take the worker's update; it is kept and written when the ledger answers",
    );
    this.schedule();
  }

  /** Drops the update kept for `taskId` (the worker's later one was written). */
  forget(taskId: string): void {
    this.kept.delete(taskId);
  }

  private schedule(): void {
    if (this.timer || this.kept.size === 0 || this.c.stopping()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.delayMs).unref();
  }

  private async flush(): Promise<void> {
    for (const [taskId, u] of [...this.kept]) {
      if (this.c.stopping()) return;
      try {
        await this.c.serial.run(() => finishTask(this.c, taskId, u.status, u.text, u.parts));
        this.c.log.info({ taskId, status: u.status }, "the worker's kept update reached the ledger");
      } catch (err) {
        if (isNatsOutage(err)) {
          this.delayMs = Math.min(this.delayMs * 2, OUTBOX_MAX_RETRY_MS);
          this.schedule();
          return;
        }
        // Refused for good (the task was canceled or expired meanwhile): nothing left to write.
        this.c.log.warn({ err, taskId }, "the ledger refused the worker's kept update; it is let go");
      }
      if (this.kept.get(taskId) === u) this.kept.delete(taskId);
      this.settled();
    }
    this.delayMs = OUTBOX_FIRST_RETRY_MS;
    this.schedule();
  }
}
