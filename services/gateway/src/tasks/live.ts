/**
 * Follows the ledger for this machine's tasks: keeps the listing index current and tells waiters
 * (blocking sends, SSE streams) about each stored change. One KV watch per gateway; a waiter first
 * registers, then reads the task, so no change can fall between the read and the wait.
 */
import { decodeToken, keys } from '@shrooms/protocol';
import { TaskIndex, isOlderView, type Ledger, type LedgerEntry, type Stored } from '@shrooms/ledger';
import { isNatsOutage, type Logger } from '@shrooms/runtime';
import type { NatsLink } from './link.js';

type Listener = (s: Stored) => void;

/** How often a waiting request reads its task itself, in case the watch stalls (ms). */
export const LIVE_REFRESH_MS = 2_000;

export class LiveTasks {
  readonly index = new TaskIndex();
  private listeners = new Map<string, Set<Listener>>();
  private stop?: () => void;
  readonly ready: Promise<void>;
  private markReady!: () => void;
  private isReady = false;

  constructor(
    readonly ledger: Ledger,
    readonly machine: string,
    private readonly log?: Logger,
    /** Tells waiters when the gateway loses NATS (link.ts), so they do not wait blind. */
    private readonly link?: Pick<NatsLink, 'onOutage'>,
  ) {
    this.ready = new Promise((r) => (this.markReady = r));
    void this.ready.then(() => (this.isReady = true));
  }

  /**
   * False only when the ledger surely had no task `key` a moment ago: the index is complete (the
   * watch's initial values are in) and has never seen the key. This gateway's own writes and replies
   * are applied at once, so only a task written elsewhere within the watch's lag can be missed.
   */
  mayExist(key: string): boolean {
    return !this.isReady || this.index.has(key, sessionOfKey(key));
  }

  /**
   * Starts the watch. Until its initial values are in, listing and the expiry sweep wait (`ready`);
   * how long that took is logged. A watch that ends by itself is logged and started again (the
   * index takes the re-read values by version, so nothing is applied twice).
   */
  async start(): Promise<void> {
    const t0 = Date.now();
    this.stop = await this.ledger.watch(
      keys.tasksOfMachine(this.machine),
      (s) => this.apply(s),
      () => {
        this.log?.info({ tasks: this.index.count(), ms: Date.now() - t0 }, 'listing index ready');
        this.markReady();
      },
      (err) => {
        this.log?.warn({ err }, 'ledger watch ended; starting it again');
        this.startSoon();
      },
    );
  }

  private startSoon(): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.start().catch((err: unknown) => {
        this.log?.error({ err }, 'ledger watch failed to start; trying again');
        this.startSoon();
      });
    }, 1_000);
    timer.unref();
  }

  private closed = false;

  close(): void {
    this.closed = true;
    this.stop?.();
  }

  /** Folds a stored entry into the index (also used for read-your-writes after a send). */
  apply(s: Stored): void {
    const session = sessionOfKey(s.key);
    this.index.upsertTask(s.key, session, s.entry.task, s.entry.v, s.revision);
    for (const l of this.listeners.get(s.key) ?? []) l(s);
  }

  /**
   * Reads `key` every `everyMs` and hands what it finds to the key's listeners (who skip what they
   * have seen). A backstop for the watch: after a stream leader's failover a KV watch can stall for
   * a while before it resumes, and a waiting client must not wait with it. A read that fails because
   * NATS or JetStream is away (after the ledger's own retries) goes to `onOutage`.
   */
  refreshEvery(key: string, everyMs = LIVE_REFRESH_MS, onOutage?: (err: Error) => void): () => void {
    const timer = setInterval(() => {
      this.ledger.get(key).then(
        (s) => {
          if (s) for (const l of this.listeners.get(key) ?? []) l(s);
        },
        (err: unknown) => {
          if (onOutage && isNatsOutage(err)) onOutage(err as Error);
        },
      );
    }, everyMs);
    timer.unref();
    return () => clearInterval(timer);
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
    signal?: AbortSignal,
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
    const stopRefresh = this.refreshEvery(key, LIVE_REFRESH_MS, (err) => reject(err));
    const stopOutage = this.link?.onOutage((err) => reject(err));
    const onAbort = () => resolve(latest);
    signal?.addEventListener('abort', onAbort, { once: true });
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
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

const view = (s: Stored) => ({ v: s.entry.v, revision: s.revision });

export function sessionOfKey(key: string): string {
  return decodeToken(key.split('.')[1] ?? '');
}
