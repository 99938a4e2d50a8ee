/**
 * An in-memory view of the ledger's tasks for listing: per session, the tasks in order of their last
 * status change, with just what filters need. It is built from the ledger and follows it (a watch),
 * so it cannot drift; it holds no task bodies. The gateway builds it per session, for the sessions
 * listed or sent to (services/gateway/src/tasks/live.ts). Listing a page returns keys; the caller reads only those tasks.
 *
 * A session may retain hundreds of thousands of tasks (DEFAULT_LIMITS.retainedTasks), all of them
 * here once it is listed, so a task costs as little as it can — about 280 bytes of heap with UUIDs
 * for its id and context, 430 before: a slot of its own class (every field in the object), one
 * string for each state, and the key as a string of its own (a key cut from the subject
 * the ledger's watch brought would keep that whole subject alive). Measured in
 * task-index-memory.test.ts.
 */
import { isTerminal, ownString, StringPool, type Task, type TaskState } from '@shrooms/protocol';

export interface TaskSummary {
  key: string;
  contextId: string;
  state: TaskState;
  /** Status timestamp, ms since epoch. */
  statusAt: number;
  /** The ledger entry's version: an older one never replaces a newer one. */
  v: number;
  /** The ledger's revision of this view (0 when not known, as in a bridge's reply). */
  revision: number;
  /** When the ledger stored this view, ms (0 when not known): its retention counts from the later of this and statusAt. */
  storedAt: number;
}

/**
 * Whether view `a` of a task is older than view `b`. The ledger's revisions are the stream's own
 * order, so they decide when both are known. Entry versions can tie: two compare-and-set writes from
 * the same version can both be stored (nats-server 2.9 in a cluster accepts both; see
 * docs/reliability.md), and the later of the two is the task as it stands.
 */
export function isOlderView(a: { v: number; revision: number }, b: { v: number; revision: number }): boolean {
  if (a.revision > 0 && b.revision > 0) return a.revision < b.revision;
  return a.v < b.v;
}

/** A task as the index holds it: every field in the object itself (no property array beside it). */
class Slot implements Omit<TaskSummary, 'storedAt'> {
  constructor(
    readonly key: string,
    readonly contextId: string,
    readonly state: TaskState,
    readonly statusAt: number,
    public v: number,
    public revision: number,
    /** Its place in the session's order; -1 once a later view or a removal replaced it. */
    public seq: number,
    /**
     * How much later than its status time the ledger last stored it, whole seconds rounded up (an ack
     * writes a finished task again): the ledger keeps it from then. A small integer (0 nearly always),
     * held in the slot itself where a second timestamp would take a heap number of its own.
     */
    public storedLaterS: number,
  ) {}
}

/** When the ledger's retention of a task began, ms: the later of its status time and its last write (`storedLater`). */
export const keptFrom = (t: { statusAt: number; storedLaterS: number }): number => t.statusAt + t.storedLaterS * 1000;

/** `storedAt` (ms) as whole seconds after `statusAt`, rounded up; 0 when not later or not known. */
export const storedLater = (statusAt: number, storedAt: number): number =>
  storedAt > statusAt ? Math.ceil((storedAt - statusAt) / 1000) : 0;

/** One string per state, not the copy each decoded task brings (40 bytes a task). */
const states = new StringPool();

export interface PageQuery {
  contextId?: string;
  status?: TaskState;
  statusAfter?: number;
  pageSize: number;
  /** Exclusive upper bound on seq from the previous page. */
  before?: number;
}

export interface Page {
  keys: string[];
  /** Seq bound for the next page, or undefined on the last page. */
  next?: number;
  total: number;
}

class SessionTasks {
  private seq = 0;
  private order: Slot[] = [];
  private byKey = new Map<string, Slot>();
  private stale = 0;

  get size(): number {
    return this.byKey.size;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  upsert(s: TaskSummary): void {
    const cur = this.byKey.get(s.key);
    if (cur && isOlderView(s, cur)) return;
    const later = storedLater(s.statusAt, s.storedAt);
    if (cur && cur.statusAt === s.statusAt && cur.state === s.state) {
      // A write that changed no status (an ack): the ledger keeps the task longer, and so does this.
      cur.v = s.v;
      cur.revision = Math.max(cur.revision, s.revision);
      cur.storedLaterS = Math.max(cur.storedLaterS, later);
      return;
    }
    if (cur) {
      cur.seq = -1; // left in `order` as a tombstone, skipped and compacted later
      this.stale++;
    }
    const slot = new Slot(cur?.key ?? ownString(s.key), s.contextId, states.share(s.state), s.statusAt, s.v, s.revision, ++this.seq, later);
    this.order.push(slot);
    this.byKey.set(slot.key, slot);
    if (this.stale > 1024 && this.stale > this.order.length / 2) this.compact();
  }

  remove(key: string): void {
    const cur = this.byKey.get(key);
    if (!cur) return;
    cur.seq = -1;
    this.stale++;
    this.byKey.delete(key);
  }

  /** Drops the finished tasks the ledger keeps from before `before` (ms); returns how many. */
  prune(before: number): number {
    let n = 0;
    for (const s of this.order) {
      if (s.seq < 0 || keptFrom(s) >= before || !isTerminal(s.state)) continue;
      this.remove(s.key);
      n++;
    }
    if (this.stale > this.order.length / 2) this.compact();
    return n;
  }

  page(q: PageQuery): Page {
    if (q.contextId === undefined && q.status === undefined && q.statusAfter === undefined) return this.unfilteredPage(q);
    const keys: string[] = [];
    let total = 0;
    let next: number | undefined;
    for (let i = this.order.length - 1; i >= 0; i--) {
      const s = this.order[i]!;
      if (s.seq < 0) continue;
      if (q.contextId !== undefined && s.contextId !== q.contextId) continue;
      if (q.status !== undefined && s.state !== q.status) continue;
      if (q.statusAfter !== undefined && s.statusAt <= q.statusAfter) continue;
      total++;
      if (q.before !== undefined && s.seq >= q.before) continue;
      if (keys.length < q.pageSize) keys.push(s.key);
      else if (next === undefined) next = this.byKey.get(keys[keys.length - 1]!)!.seq;
    }
    return { keys, total, ...(next !== undefined ? { next } : {}) };
  }

  /**
   * The same page as `page` gives with no filter, without walking every task: the total is the
   * number of live slots, and the walk stops one task past the page (which says whether a next
   * page exists). Cost: the page plus the tombstones among it, not the session's history.
   */
  private unfilteredPage(q: PageQuery): Page {
    const keys: string[] = [];
    let next: number | undefined;
    for (let i = this.order.length - 1; i >= 0; i--) {
      const s = this.order[i]!;
      if (s.seq < 0) continue;
      if (q.before !== undefined && s.seq >= q.before) continue;
      if (keys.length < q.pageSize) {
        keys.push(s.key);
        continue;
      }
      next = this.byKey.get(keys[keys.length - 1]!)!.seq;
      break;
    }
    return { keys, total: this.byKey.size, ...(next !== undefined ? { next } : {}) };
  }

  private compact(): void {
    this.order = this.order.filter((s) => s.seq >= 0);
    this.stale = 0;
  }
}

export class TaskIndex {
  private sessions = new Map<string, SessionTasks>();

  /** `storedAt`: when the ledger stored this view (Stored.storedAt), ms; 0 when not known. */
  upsertTask(key: string, session: string, task: Task, v = 0, revision = 0, storedAt = 0): void {
    let st = this.sessions.get(session);
    if (!st) this.sessions.set(session, (st = new SessionTasks()));
    const statusAt = Date.parse(task.status.timestamp ?? '') || 0;
    st.upsert({ key, contextId: task.contextId, state: task.status.state, statusAt, v, revision, storedAt });
  }

  remove(key: string, session: string): void {
    this.sessions.get(session)?.remove(key);
  }

  /**
   * Drops every session's finished tasks the ledger has kept since before `before` (ms) — from the
   * later of their status time and their last write, as the bucket's age limit counts — as the
   * ledger lets them go after its retention: its expiry tells no watch, so without this an index
   * would follow a session's whole history for as long as its process runs. Returns how many went.
   */
  prune(before: number): number {
    let n = 0;
    for (const [session, st] of this.sessions) {
      n += st.prune(before);
      if (st.size === 0) this.sessions.delete(session);
    }
    return n;
  }

  page(session: string, q: PageQuery): Page {
    return this.sessions.get(session)?.page(q) ?? { keys: [], total: 0 };
  }

  /** Whether the index has seen the task `key` of `session` (it keeps what the ledger let go until `prune`). */
  has(key: string, session: string): boolean {
    return this.sessions.get(session)?.has(key) ?? false;
  }

  sessionNames(): string[] {
    return [...this.sessions.keys()];
  }

  count(session?: string): number {
    if (session !== undefined) return this.sessions.get(session)?.size ?? 0;
    let n = 0;
    for (const st of this.sessions.values()) n += st.size;
    return n;
  }
}
