/**
 * The bridge's view of its session, pure (no I/O, no clock of its own): which tasks wait in the
 * queue, which are held for their owner, which are open, and which one the session works on now.
 * It is a view of the ledger — the rooms around it write the ledger first and then tell the view —
 * so a restart rebuilds it from the ledger and loses nothing.
 */
import { META, ShroomsError, isTerminal, type Task } from '@shrooms/protocol';
import { isAnswer } from '../prompt.js';
import { TaskQueue, type Queued } from './queue.js';

/** The task the session works on now. */
export interface Current {
  key: string;
  taskId: string;
  /** The task's trace context, for the worker's own asks. */
  traceparent?: string;
}

/** A task as the view needs it: its ledger key and the task as stored (a ledger `Stored` is one). */
export interface ViewEntry {
  key: string;
  entry: { task: Task };
}

export interface RoomLimits {
  /** Tasks waiting (queued and held) per session. */
  queueLength: number;
  /** Open tasks per session. */
  openTasks: number;
}

export class SessionView {
  private readonly queue = new TaskQueue();
  private readonly held = new Map<string, string>(); // key → task id
  private readonly open = new Map<string, string>(); // key → state, every open task of the session
  /** New tasks being written that will wait (`reserve`): whether anything touched them meanwhile. */
  private readonly incoming = new Map<string, { touched: boolean }>();
  private cur?: Current;

  get current(): Current | undefined {
    return this.cur;
  }

  /** Tasks that wait (queued, held, or being written to wait): what the signal shows as queued. */
  get waiting(): number {
    return this.queue.length + this.held.size + this.incoming.size;
  }

  /** New tasks being written that will wait. */
  get arriving(): number {
    return this.incoming.size;
  }

  get queued(): number {
    return this.queue.length;
  }

  get openCount(): number {
    return this.open.size;
  }

  /** Busy: a task is current, or the harness is not idle (idle between turns is not free). */
  busy(harnessIdle: boolean): boolean {
    return this.cur !== undefined || !harnessIdle;
  }

  isCurrent(key: string): boolean {
    return this.cur?.key === key;
  }

  /** Whether the view holds the key anywhere (open, queued, current). */
  knows(key: string): boolean {
    return this.open.has(key) || this.queue.has(key) || this.cur?.key === key;
  }

  /** Whether the key waits (queued, held) or is current. */
  placed(key: string): boolean {
    return this.cur?.key === key || this.queue.has(key) || this.held.has(key);
  }

  /** Refuses a new task when the queue or the open tasks are at their limit. */
  checkRoom(name: string, limits: RoomLimits): void {
    if (this.waiting >= limits.queueLength) {
      const parts = [
        `${this.queue.length} queued`,
        this.held.size && `${this.held.size} held for its owner`,
        this.incoming.size && `${this.incoming.size} arriving`,
      ];
      const why = parts.filter(Boolean).join(', ');
      throw new ShroomsError('QUEUE_FULL', `${name} has ${this.waiting} tasks waiting (${why}); the limit is ${limits.queueLength}`, {
        limit: 'queueLength',
        max: limits.queueLength,
      });
    }
    const open = this.open.size + this.incoming.size;
    if (open >= limits.openTasks) {
      throw new ShroomsError('LIMIT_EXCEEDED', `${name} has ${open} open tasks; the limit is ${limits.openTasks}`, {
        limit: 'openTasksPerSession',
        max: limits.openTasks,
      });
    }
  }

  /**
   * Holds a place (in the room `checkRoom` counts) for a new task about to be written, which will
   * wait; false when the key is being written already (a resend racing its first delivery).
   */
  reserve(key: string): boolean {
    if (this.incoming.has(key)) return false;
    this.incoming.set(key, { touched: false });
    return true;
  }

  /** Whether `key` is being written by `reserve`'s caller; marks it touched (its write may be stale). */
  touch(key: string): boolean {
    const r = this.incoming.get(key);
    if (r) r.touched = true;
    return r !== undefined;
  }

  /** The write of a reserved task ended: frees its place; true when it was touched meanwhile. */
  unreserve(key: string): boolean {
    const r = this.incoming.get(key);
    this.incoming.delete(key);
    return r?.touched ?? false;
  }

  /** Takes a stored task in: finished ones are ignored, submitted ones queued (or held), all others open. */
  track(e: ViewEntry, now = Date.now()): void {
    const t = e.entry.task;
    if (isTerminal(t.status.state)) return;
    this.open.set(e.key, t.status.state);
    if (t.status.state !== 'TASK_STATE_SUBMITTED') return;
    if (t.metadata?.[META.held] === true) this.held.set(e.key, t.id);
    else this.enqueue(e, now);
  }

  /**
   * Takes up an open task of the session that nobody runs: one stored WORKING whose start this
   * bridge never saw acknowledged (its write timed out and was stored after all). It waits in the
   * queue like any other; starting it again is what the turn loop does with every queued task.
   */
  adopt(e: ViewEntry, now = Date.now()): void {
    this.open.set(e.key, e.entry.task.status.state);
    this.enqueue(e, now);
  }

  /** Queues a task (answers first, then in the order asked); never the current one. */
  enqueue(e: ViewEntry, now = Date.now()): void {
    if (this.cur?.key === e.key) return;
    const askedAt = Date.parse(String(e.entry.task.metadata?.[META.createdAt] ?? '')) || now;
    this.queue.add({ key: e.key, taskId: e.entry.task.id, answer: isAnswer(e.entry.task), askedAt });
  }

  /** A held task let go by its owner: it waits in the queue like any other. */
  unhold(e: ViewEntry, now = Date.now()): void {
    this.held.delete(e.key);
    if (!isTerminal(e.entry.task.status.state)) this.enqueue(e, now);
  }

  /** The next task to start, taken out of the queue. */
  next(): Queued | undefined {
    return this.queue.shift();
  }

  /** Puts back a task that could not start (it goes to its place by order). */
  putBack(q: Queued): void {
    this.queue.add(q);
  }

  /** The session starts working on a task. */
  start(c: Current, state: string): void {
    this.cur = c;
    this.open.set(c.key, state);
  }

  /** The worker said how a task went: blocked stays open, others close; it is no longer current. */
  updated(key: string, state: string, stillOpen: boolean): void {
    if (stillOpen) this.open.set(key, state);
    else this.open.delete(key);
    if (this.cur?.key === key) this.cur = undefined;
    this.queue.remove(key);
  }

  /** Drops a task from everywhere; true if it was the current one (whose turn the caller cancels). */
  forget(key: string): boolean {
    this.touch(key);
    this.queue.remove(key);
    this.held.delete(key);
    this.open.delete(key);
    if (this.cur?.key !== key) return false;
    this.cur = undefined;
    return true;
  }

  /** Frees the session from its current task (which stays open); returns what it was. */
  clearCurrent(key?: string): Current | undefined {
    const c = this.cur;
    if (!c || (key !== undefined && c.key !== key)) return undefined;
    this.cur = undefined;
    return c;
  }
}
