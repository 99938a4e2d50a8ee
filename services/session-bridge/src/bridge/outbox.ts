/**
 * The worker's updates the ledger did not take — NATS or JetStream away past the ledger's own
 * retries, e.g. a machine cut off from the mesh. Each is kept and written when the ledger answers
 * again, so a result is not lost to an outage and the session is not held for a day (the task's
 * deadline) by a task it has finished. One update per task: a later one replaces it. Kept in memory
 * and, given a file (outbox-file.ts), on disk: a bridge stopped or killed meanwhile writes them at
 * its next start (`restore`) instead of delivering their tasks again.
 */
import type { Part, TaskState } from '@shrooms/protocol';
import { isInterrupted } from '@shrooms/protocol';
import { localTaskKey, refusedForGood } from '@shrooms/ledger';
import type { HarnessUpdateStatus } from '../harness/types.js';
import type { Core } from './core.js';
import { loadKept, saveKept, type OutboxFile } from './outbox-file.js';
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
  /** When the worker said it (ISO): the task's status carries that time, not the later write's. */
  at?: string;
}

export class Outbox {
  private readonly kept = new Map<string, Kept>();
  private timer?: NodeJS.Timeout;
  private delayMs = OUTBOX_FIRST_RETRY_MS;

  constructor(
    private readonly c: Core,
    /** A kept update was written or let go: the session may move on. */
    private readonly settled: () => void,
    /** Where the kept updates outlive this process; none: in memory only. */
    private readonly file?: OutboxFile,
  ) {}

  /** Updates waiting for the ledger. */
  get size(): number {
    return this.kept.size;
  }

  /** Keeps the update of task `taskId` (its ledger key `key`); the view takes it as said. Run under the lock. */
  keep(taskId: string, u: Kept): void {
    this.kept.set(taskId, u);
    this.takeAsSaid(u);
    this.save();
    this.c.log.warn(
      { taskId, status: u.status },
      "the ledger did not take the worker's update; it is kept and written when the ledger answers",
    );
    this.schedule();
  }

  /** Drops the update kept for `taskId` (the worker's later one was written). */
  forget(taskId: string): void {
    if (this.kept.delete(taskId)) this.save();
  }

  /**
   * At start, before the tasks found working are delivered again: writes the updates an earlier run
   * kept (and keeps those the ledger does not take yet). Returns the keys of their tasks, which are
   * not to be delivered again. Run once the ledger has answered (the session's watch is in).
   */
  async restore(): Promise<Set<string>> {
    const keys = new Set<string>();
    if (!this.file) return keys;
    let found;
    try {
      found = loadKept(this.file);
    } catch (err) {
      this.c.log.warn({ err }, (err as Error).message);
      return keys;
    }
    for (const { taskId, ...u } of found) {
      // Only this session's tasks, each under its own key (the file is in a folder the session can write).
      if (!this.isOwnKey(taskId, u.key)) {
        this.c.log.warn({ taskId, key: u.key }, 'a kept update not of a task of this session is let go');
        continue;
      }
      keys.add(u.key);
      this.kept.set(taskId, u);
      this.takeAsSaid(u);
    }
    this.save();
    if (keys.size) {
      this.c.log.info({ updates: keys.size }, "writing the worker's updates kept before this start");
      await this.flush();
    }
    return keys;
  }

  /** Forgets the timer; what is kept stays in the file for the next start. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Where what is kept now outlives a stop: the file, or nowhere. */
  get keptIn(): string | undefined {
    return this.file?.path;
  }

  private isOwnKey(taskId: string, key: string): boolean {
    try {
      return localTaskKey(this.c.ledger, this.c.machine, this.c.session, taskId) === key;
    } catch {
      return false;
    }
  }

  private takeAsSaid(u: Kept): void {
    const state = STATE_OF[u.status];
    this.c.view.updated(u.key, state, isInterrupted(state));
  }

  private save(): void {
    if (!this.file) return;
    try {
      saveKept(
        this.file,
        [...this.kept].map(([taskId, u]) => ({ taskId, ...u })),
      );
    } catch (err) {
      this.c.log.warn({ err, file: this.file.path }, 'the kept updates could not be written to disk; they are kept in memory only');
    }
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
        await this.c.serial.run(() => finishTask(this.c, taskId, u.status, u.text, u.parts, u.at ? new Date(u.at) : undefined));
        this.c.log.info({ taskId, status: u.status }, "the worker's kept update reached the ledger");
      } catch (err) {
        // Kept for the next try unless refused for good: NATS away, and a retryable answer too (a
        // replica not caught up right after NATS came back, a key changed too often), which would
        // otherwise lose the worker's result and leave its task WORKING until expiry.
        if (!refusedForGood(err)) {
          this.c.log.info({ err, taskId }, "the worker's kept update was not written yet; trying again");
          this.delayMs = Math.min(this.delayMs * 2, OUTBOX_MAX_RETRY_MS);
          this.schedule();
          return;
        }
        // Refused for good (the task was canceled or expired meanwhile): nothing left to write.
        this.c.log.warn({ err, taskId }, "the ledger refused the worker's kept update; it is let go");
      }
      if (this.kept.get(taskId) === u) {
        this.kept.delete(taskId);
        this.save();
      }
      this.settled();
    }
    this.delayMs = OUTBOX_FIRST_RETRY_MS;
    this.schedule();
  }
}
