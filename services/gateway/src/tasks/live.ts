/**
 * Follows the ledger for this machine's tasks and tells waiters (blocking sends, SSE streams) about
 * each stored change: one KV watch per gateway; a waiter first registers, then reads the task, so no
 * change can fall between the read and the wait.
 *
 * Nothing here follows history at start: the watch brings changes from now on. A session's listing
 * index is built when the session is first listed, looked up or sent to (one read of that
 * session's tasks), then kept current by the watch; a name looked up that has no task keeps none.
 * Of the rest of the ledger the gateway keeps only the open tasks (for the expiry sweep), found by
 * one pass once it is up, while it already answers.
 *
 * Over 300 lines because the watch, the session indexes, the open tasks and the waiters share one
 * lifecycle: a restart of the watch rebuilds all of them.
 */
import { decodeToken, isTerminal, keys, META, type Task } from '@shrooms/protocol';
import { TaskIndex, isOlderView, type Ledger, type LedgerEntry, type Stored } from '@shrooms/ledger';
import { isNatsOutage, keepWatching, type Logger, type NatsLink } from '@shrooms/runtime';

const quiet = { warn: () => {}, info: () => {} };

type Listener = (s: Stored) => void;

/** How often a waiting request reads its task itself, in case the watch stalls (ms). */
export const LIVE_REFRESH_MS = 2_000;

/**
 * Calls `then` once when the client of a request has gone (its socket closed), until the returned
 * function is called. A socket listener, not an AbortController: one per request cost the gateway
 * ~6 µs warm and ~20 µs at concurrency 1 (Node 20), where the listener costs a tenth.
 */
export type ClientGone = (then: () => void) => () => void;

/** An open task as the expiry sweep needs it. */
export interface OpenTask {
  key: string;
  /** When the task was asked, ms since epoch. */
  createdAt: number;
  v: number;
  revision: number;
}

export class LiveTasks {
  /** The listing index of the sessions in `loads` (none of the others). */
  index = new TaskIndex();
  /** Counts restarts of the watch: what was built before one may have missed a change. */
  private generation = 0;
  /** Sessions whose index is being or has been built, by session. */
  private loads = new Map<string, Promise<void>>();
  /** Sessions whose index is complete: a key it never saw is no task of theirs. */
  private loaded = new Set<string>();
  private open = new Map<string, OpenTask>();
  private listeners = new Map<string, Set<Listener>>();
  /** One refresh read per key however many follow it (`refreshEvery`): its timer, users and outage listeners. */
  private refreshing = new Map<string, { timer: NodeJS.Timeout; users: number; outage: Set<(err: Error) => void> }>();
  private stop?: () => void;
  private scans = new Set<() => void>();
  private openPass?: Promise<void>;

  constructor(
    readonly ledger: Ledger,
    readonly machine: string,
    private readonly log?: Logger,
    /** Tells waiters when the gateway loses NATS (link.ts), so they do not wait blind. */
    private readonly link?: Pick<NatsLink, 'onOutage'>,
    private readonly refreshMs = LIVE_REFRESH_MS,
  ) {}

  /** Keys read on a timer now (`refreshEvery`): one each, however many wait on or stream them. */
  get refreshedKeys(): number {
    return this.refreshing.size;
  }

  /**
   * False only when the ledger surely had no task `key` a moment ago: its session's index is
   * complete and has never seen the key. This gateway's own writes and replies are applied at once,
   * so only a task written elsewhere within the watch's lag can be missed. A session not indexed yet
   * starts its index here (the next sends to it cost no read).
   */
  mayExist(key: string): boolean {
    const session = sessionOfKey(key);
    if (this.loaded.has(session)) return this.index.has(key, session);
    this.session(session).catch(() => {});
    return true;
  }

  /**
   * The listing index of `session`, complete: built on first use from one read of the session's
   * tasks (a watch stopped once its initial values are in), then kept current by the machine's
   * watch. A failed build is tried again by the next caller.
   */
  session(session: string): Promise<void> {
    let p = this.loads.get(session);
    if (!p) {
      p = this.load(session);
      this.loads.set(session, p);
      p.catch(() => this.loads.delete(session));
    }
    return p;
  }

  /**
   * Whether the ledger holds tasks of `session`, from its listing index (built here when it is not
   * yet). The index of a session with none is not kept: session names are client input, and a name
   * asked about that is no session must leave nothing behind. Its next use builds it again.
   */
  async hasTasks(session: string): Promise<boolean> {
    const load = this.session(session);
    await load;
    if (this.index.count(session) > 0) return true;
    // Unless the watch restarted meanwhile and another caller started a newer build.
    if (this.loads.get(session) === load) {
      this.loads.delete(session);
      this.loaded.delete(session);
    }
    return false;
  }

  /**
   * Lets the listing indexes go of the finished tasks the ledger has kept since before `before` (ms;
   * from the later of their status time and their last write): the ledger drops them after its
   * retention, and its expiry tells no watch. Returns how many went.
   */
  pruneFinished(before: number): number {
    return this.index.prune(before);
  }

  /**
   * `pruneFinished` by the ledger's retention, read again first (another machine's gateway, started
   * later with its own setting, may have changed the bucket's); by the last one known when it cannot be read.
   */
  async pruneByRetention(): Promise<number> {
    await this.ledger
      .readRetention()
      .catch((err: unknown) => this.log?.warn({ err }, "could not read the ledger's retention; pruning by the last one read"));
    return this.pruneFinished(Date.now() - this.ledger.retentionMs);
  }

  /** The sessions whose listing index is kept (built or being built). */
  indexedSessions(): string[] {
    return [...this.loads.keys()];
  }

  private async load(session: string): Promise<void> {
    const t0 = Date.now();
    const gen = this.generation;
    await this.readOnce(
      keys.tasksOfSession(this.machine, session),
      (s) => gen === this.generation && this.index.upsertTask(s.key, session, s.entry.task, s.entry.v, s.revision, s.storedAt),
      `the read of session ${session}'s tasks ended early`,
    );
    if (gen !== this.generation) throw new Error(`the ledger watch restarted while session ${session} was read`);
    this.loaded.add(session);
    this.log?.info({ session, tasks: this.index.count(session), ms: Date.now() - t0 }, 'listing index of a session ready');
  }

  /** Open tasks asked before `before` (for the expiry sweep). */
  openAskedBefore(before: number): OpenTask[] {
    return [...this.open.values()].filter((t) => t.createdAt < before);
  }

  /** Drops an open task the ledger no longer holds (let go by its retention). */
  forgetOpen(key: string): void {
    this.open.delete(key);
  }

  /**
   * Starts the watch: the changes stored from now on, none of the history (so the start does not
   * follow what the ledger retains). A watch that ends by itself is started again (keepWatching),
   * and what it missed meanwhile is found again (`rebuild`).
   */
  async start(): Promise<void> {
    this.stop = await keepWatching(
      (ended) => this.ledger.watch(keys.tasksOfMachine(this.machine), (s) => this.apply(s), undefined, ended, { only: 'updates' }),
      { log: this.log ?? quiet, what: 'the ledger watch', back: () => this.rebuild() },
    );
  }

  /**
   * Resolves once the open tasks of the machine are known, for the expiry sweep. The first call
   * reads every retained task once (a watch stopped when its initial values are in) and keeps only
   * the open ones; the gateway starts it once it is up (main.ts), and answers meanwhile. The
   * watch above, started before, brings every change since, so none falls between the two.
   */
  openKnown(): Promise<void> {
    if (!this.openPass) {
      this.openPass = this.findOpen();
      this.openPass.catch(() => (this.openPass = undefined));
    }
    return this.openPass;
  }

  private async findOpen(): Promise<void> {
    const t0 = Date.now();
    await this.readOnce(keys.tasksOfMachine(this.machine), (s) => this.applyOpen(s), 'the read of the open tasks ended early');
    this.log?.info({ open: this.open.size, ms: Date.now() - t0 }, 'open tasks known');
  }

  /** Reads what the ledger holds under `filter` once, to its end (a watch of the initial values alone). */
  private async readOnce(filter: string, onEntry: (s: Stored) => void, endedEarly: string): Promise<void> {
    let done!: () => void;
    let failed!: (err: unknown) => void;
    const complete = new Promise<void>((res, rej) => ((done = res), (failed = rej)));
    const stop = await this.ledger.watch(
      filter,
      onEntry,
      () => done(),
      (err) => failed(err ?? new Error(endedEarly)),
      { only: 'initial' },
    );
    this.scans.add(stop);
    try {
      await complete;
    } finally {
      stop();
      this.scans.delete(stop);
    }
  }

  /**
   * After the watch restarted: changes stored while it was down came to nobody, so the session
   * indexes are dropped (each is built again on its next use) and the open tasks found again.
   */
  private rebuild(): void {
    this.generation++;
    this.index = new TaskIndex();
    this.loads.clear();
    this.loaded.clear();
    if (this.openPass) {
      this.openPass = undefined;
      this.openKnown().catch((err: unknown) => this.log?.warn({ err }, 'finding the open tasks failed; the next sweep tries again'));
    }
  }

  close(): void {
    this.stop?.();
    for (const stop of this.scans) stop();
  }

  /** Folds a stored entry into the index (also used for read-your-writes after a send). */
  apply(s: Stored): void {
    const session = sessionOfKey(s.key);
    if (this.loads.has(session)) this.index.upsertTask(s.key, session, s.entry.task, s.entry.v, s.revision, s.storedAt);
    this.applyOpen(s);
    for (const l of this.listeners.get(s.key) ?? []) l(s);
  }

  /** Keeps `open` to the tasks not finished, by version (an older view never replaces a newer). */
  private applyOpen(s: Stored): void {
    const cur = this.open.get(s.key);
    const at = { v: s.entry.v, revision: s.revision };
    if (cur && isOlderView(at, cur)) return;
    if (isTerminal(s.entry.task.status.state)) this.open.delete(s.key);
    else this.open.set(s.key, { key: s.key, createdAt: askedAt(s.entry.task), ...at });
  }

  /**
   * Reads `key` every LIVE_REFRESH_MS and hands what it finds to the key's listeners (who skip what
   * they have seen) — one read however many wait on or stream the key. A backstop for the watch:
   * after a stream leader's failover a KV watch can stall for a while before it resumes, and a
   * waiting client must not wait with it. A read that fails because NATS or JetStream is away (after
   * the ledger's own retries) goes to each `onOutage`. Returns the caller's stop (once).
   */
  refreshEvery(key: string, onOutage?: (err: Error) => void): () => void {
    let r = this.refreshing.get(key);
    if (!r) {
      const outage = new Set<(err: Error) => void>();
      const timer = setInterval(() => {
        this.ledger.get(key).then(
          (s) => {
            if (s) for (const l of this.listeners.get(key) ?? []) l(s);
          },
          (err: unknown) => {
            if (isNatsOutage(err)) for (const tell of outage) tell(err as Error);
          },
        );
      }, this.refreshMs);
      timer.unref();
      this.refreshing.set(key, (r = { timer, users: 0, outage }));
    }
    const mine = r;
    mine.users++;
    const tell = onOutage && ((err: Error) => onOutage(err));
    if (tell) mine.outage.add(tell);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      if (tell) mine.outage.delete(tell);
      if (--mine.users > 0) return;
      clearInterval(mine.timer);
      this.refreshing.delete(key);
    };
  }

  /** Calls `fn` for every change of `key` until the returned function is called. */
  listen(key: string, fn: Listener): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(fn);
    return () => {
      set!.delete(fn);
      if (set!.size === 0) this.listeners.delete(key);
    };
  }

  /**
   * Resolves with the first entry of `key` (newer than `after`) for which `done` holds, or with the
   * latest entry when `timeoutMs` passes or `signal` aborts. `first` gives the entry to start from
   * once the listener is in place: by default a read of the ledger; a caller that writes the task
   * itself (a send) passes its write, so no change can fall between it and the wait and no second
   * read is needed. Rejects with the client's error when NATS or JetStream goes away meanwhile:
   * nothing can be learned of the task until it is back, and the caller must not wait blind.
   */
  async waitFor(
    key: string,
    done: (e: LedgerEntry) => boolean,
    timeoutMs: number,
    gone?: ClientGone,
    first: () => Promise<Stored | null> = () => this.ledger.get(key),
  ): Promise<Stored | null> {
    let latest = null as Stored | null;
    let resolve!: (s: Stored | null) => void;
    let reject!: (err: Error) => void;
    const result = new Promise<Stored | null>((res, rej) => ((resolve = res), (reject = rej)));
    // An outage may come while `first()` is still running, before anyone awaits `result`: it is
    // then thrown by the await below, never left as an unhandled rejection (which ends the process).
    result.catch(() => {});
    const unlisten = this.listen(key, (s) => {
      if (latest && !isOlderView(view(latest), view(s))) return;
      latest = s;
      if (done(s.entry)) resolve(s);
    });
    const timer = setTimeout(() => resolve(latest), timeoutMs);
    const stopRefresh = this.refreshEvery(key, (err) => reject(err));
    const stopOutage = this.link?.onOutage((err) => reject(err));
    const stopGone = gone?.(() => resolve(latest));
    try {
      const cur = await first();
      if (cur && (!latest || isOlderView(view(latest), view(cur)))) latest = cur;
      if (latest && done(latest.entry)) return latest;
      return await result;
    } finally {
      clearTimeout(timer);
      stopRefresh();
      stopOutage?.();
      unlisten();
      stopGone?.();
    }
  }
}

/** When a task was asked, ms since epoch (its status time when the ledger did not say). */
function askedAt(task: Task): number {
  const statusAt = Date.parse(task.status.timestamp ?? '') || 0;
  return Date.parse(String(task.metadata?.[META.createdAt] ?? '')) || statusAt;
}

const view = (s: Stored) => ({ v: s.entry.v, revision: s.revision });

export function sessionOfKey(key: string): string {
  return decodeToken(key.split('.')[1] ?? '');
}
