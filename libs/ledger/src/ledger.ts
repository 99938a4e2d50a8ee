/**
 * The ledger: the retained truth of every task (spec §3). A JetStream KV bucket (`shrooms_tasks`, file
 * storage) holding each task as it now stands; every change is a compare-and-set on the key's last
 * revision (casPut of @shrooms/runtime, exact on the R3 bucket): writers (bridge, gateway, sweeper)
 * never lose or reorder a change, nor reopen a finished task.
 *
 * The bucket retains at most `retainedTasks` entries (the stream's max messages, discard new): at the
 * limit a new task is refused with LIMIT_EXCEEDED `retainedTasks` and nothing is dropped — every
 * retained task can still change, and room comes back as finished tasks age out (finishedRetentionMs).
 *
 * Reading one task is a direct get of its key (cost flat in ledger size). Reads and writes ride out a
 * stream leader's election (a few seconds in a cluster) with bounded retries. `reads` counts KV reads
 * so tests can show a page touches only what it returns.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream } from '@nats-io/jetstream';
import { BUCKETS, DEFAULT_LIMITS, ShroomsError, keys, noTaskMessage, type Limits } from '@shrooms/protocol';
import { natsUnavailable, retryJetStream, type LinkState } from '@shrooms/runtime';
import { merged, type LedgerEntry, type Stored } from './entry.js';
import { OwnWrites } from './own-writes.js';
import { decode, encodeWrite, type Encoded } from './codec.js';
import { watchTasks } from './watch.js';
import { DeferredChanges, compose, type Change } from './deferred.js';
import { createHeld, fromKnown, parseKnown, refusedForGood, type KnownWriter } from './known.js';
import { readAtLeast } from './read.js';
import { writeOnce } from './write.js';
import type { Hardening } from './harden.js';
import { openTaskBucket, readRetention } from './bucket.js';

export interface LedgerOptions {
  replicas?: number;
  limits?: Partial<Limits>;
  /**
   * This process owns the bucket's configuration (the gateway): it sets the retained-task limit to
   * `limits.retainedTasks`, the retention to `limits.finishedRetentionMs` and hardens a stream made before. Default false: the bucket is made
   * when it is missing, else taken as it is — whoever opens it last does not decide its limit.
   */
  owner?: boolean;
  /**
   * This process's NATS link: while it says the connection is lost (past its grace), reads and
   * writes are refused NATS_UNAVAILABLE at once instead of waiting out their retries (up to
   * WRITE_DEADLINE_MS), so a caller that can keep what it wanted written (the bridge's outbox) does.
   */
  link?: LinkState;
}

export { WRITE_DEADLINE_MS } from './write.js';
const PROBE_TIMEOUT_MS = 500;
export class Ledger {
  /** Task reads done through `get` (tests show a page reads only what it returns). */
  reads = 0;
  /** Entries delivered by watches (following the ledger, not reading it). */
  watched = 0;
  /** How an owner's `open` left the bucket's stream (rollups and purges refused or not); unset otherwise. */
  hardening?: Hardening;
  /** The bucket's most tasks as `open` found or set them; unknown after `bind`. */
  retained?: number;
  /**
   * How long the bucket keeps a task after its last write, ms, as `open` found or set it, or
   * `readRetention` last read it (bucket.ts); the setting after `bind`.
   */
  retentionMs: number;
  /** An owner's `open` could not set the bucket's limits (replicated on nats-server 2.9, or not permitted). */
  limitsLeft = false;
  /** Entries delivered by watches that skip this process's own writes (`ownWrites: 'skip'`), skipped. */
  ownSkipped = 0;
  private own = new OwnWrites();
  private deferred = new DeferredChanges();
  private readonly due = (key: string): void => void this.writeDeferred(key).catch(() => {});
  private readonly known: KnownWriter = {
    own: this.own,
    deferred: this.deferred,
    encode: (entry, base) => encodeWrite(entry, base, this.limits.taskBytes),
    write: (key, encoded, expected) => this.write(key, encoded, expected),
    due: (key) => this.due(key),
  };

  private constructor(
    private readonly nc: NatsConnection,
    readonly kv: KV,
    readonly limits: Limits,
    private readonly link?: LinkState,
  ) {
    this.retentionMs = limits.finishedRetentionMs;
  }

  /** Creates the bucket if needed (idempotent, hardened) and binds to it: bucket.ts says who sets its limits. */
  static async open(nc: NatsConnection, opts: LedgerOptions = {}): Promise<Ledger> {
    const limits = { ...DEFAULT_LIMITS, ...opts.limits } as Limits;
    const bucket = await openTaskBucket(nc, limits, opts);
    const ledger = new Ledger(nc, bucket.kv, limits, opts.link);
    ledger.hardening = bucket.hardening;
    ledger.retained = bucket.retained;
    ledger.retentionMs = bucket.retentionMs;
    ledger.limitsLeft = bucket.limitsLeft;
    return ledger;
  }

  /**
   * Binds to the existing bucket without asking JetStream about the stream: reads by direct get
   * (the key in the subject), so a bridge's NATS user needs no `STREAM.INFO`, which would list every
   * machine's keys (deploy/nats). The bucket must exist (the gateway creates it).
   */
  static async bind(nc: NatsConnection, opts: Pick<LedgerOptions, 'limits' | 'link'> & { probeKey: string }): Promise<Ledger> {
    const limits = { ...DEFAULT_LIMITS, ...opts.limits } as Limits;
    const kv = await new Kvm(nc).open(BUCKETS.tasks, { allow_direct: true });
    // A bridge may start with the gateway that creates the bucket: read one key it may read until the
    // stream answers (about 30 s at most). A direct get sent before the stream exists gets no answer at
    // all, so each probe waits PROBE_TIMEOUT_MS, not the 5-s request timeout.
    const probe = await new Kvm(jetstream(nc, { timeout: PROBE_TIMEOUT_MS })).open(BUCKETS.tasks, { allow_direct: true });
    await retryJetStream(() => probe.get(opts.probeKey), { attempts: 25, maxDelayMs: 1_000 });
    return new Ledger(nc, kv, limits, opts.link);
  }

  key(machine: string, session: string, messageId: string): string {
    return keys.task(machine, session, messageId);
  }

  /**
   * The task as stored. A direct get is answered by any replica of the bucket, and one that lags (a
   * node back from a crash) can answer an older revision — or nothing, right after a create — than
   * its caller has seen. `atLeast`: a revision the caller knows the key has reached (a watched
   * change, a refused create or compare-and-set); an older answer is asked again, for about
   * 2.5 s at most, then refused as INTERNAL (retryable). A key deleted since answers null.
   */
  async get(key: string, opts: { atLeast?: number } = {}): Promise<Stored | null> {
    this.reads++;
    this.refuseWhileAway(`${key} was not read`);
    // Read-your-writes: what this process holds back is written first.
    const writing = this.deferred.settled(key);
    if (writing) await writing;
    if (this.deferred.has(key)) await this.writeDeferred(key);
    const atLeast = opts.atLeast ?? 0;
    const { e, behind } = await readAtLeast(this.kv, key, atLeast);
    if (behind) throw new ShroomsError('INTERNAL', `the ledger's replicas have not caught up with revision ${atLeast} of ${key}; retry`);
    this.own.saw(key, e?.revision);
    return decode(e);
  }

  /** Writes the first entry of a task; null when the key already exists (a create this process holds is written first). */
  async create(key: string, entry: LedgerEntry): Promise<Stored | null> {
    const writing = this.deferred.settled(key);
    if (writing) await writing;
    if (this.deferred.has(key)) await this.writeDeferred(key);
    return this.write(key, encodeWrite(entry, undefined, this.limits.taskBytes), 0);
  }

  /**
   * One write, a create (`expected` 0) or a compare-and-set, with its retries (write.ts): the entry
   * as stored, null when refused (the key moved on) — or, when this write was stored but its
   * acknowledgement lost and another writer's change is already on top of it, the key as it now
   * stands (which holds this write's change).
   */
  private async write(key: string, e: Encoded, expected: number): Promise<Stored | null> {
    const hooks = { refuse: (what: string) => this.refuseWhileAway(what), retained: this.retained };
    const r = await this.own.sending(key, e.data, () => writeOnce(this.kv, key, e.data, expected, e.id, hooks));
    if (r === null) return null;
    if (typeof r === 'number') return this.own.stored({ key, revision: r, entry: e.entry, storedAt: Date.now() }, e.data);
    this.own.saw(key, r.revision);
    return r;
  }

  /** NATS_UNAVAILABLE at once while this process's NATS link says the connection is lost. */
  private refuseWhileAway(what: string): void {
    const ms = this.link?.outageMs;
    if (ms !== undefined) throw natsUnavailable(`the ledger is out of reach: NATS connection lost ${Math.round(ms / 1000)} s ago; ${what}`);
  }

  /**
   * Applies `then` to the task's current entry with compare-and-set, retrying on a concurrent
   * write. `then` returns the next entry, or null to leave the task as it is (no write); a change
   * held back for the key (`deferTransition`) is applied first, in the same write.
   * Throws TASK_NOT_FOUND when the task is not in the ledger.
   */
  async transition(key: string, then: Change, attempts = 20): Promise<Stored> {
    // What is held back for this key goes with this change, in one write.
    const writing = this.deferred.settled(key);
    if (writing) await writing;
    const held = this.deferred.take(key);
    if (held && 'create' in held) {
      const created = await this.deferred.writes(key, createHeld(this.known, key, held, then));
      if (created) return created;
    }
    const change = held && 'change' in held ? compose(held, then) : then;
    const known = this.own.last(key);
    if (known) {
      const done = await fromKnown(this.known, key, known, change);
      if (done) return done;
    }
    // After a refused compare-and-set the key is past the revision read: a replica that lags must
    // not answer the same one again.
    let seen = 0;
    for (let i = 0; i < attempts; i++) {
      const cur = await this.get(key, { atLeast: seen });
      if (!cur) throw new ShroomsError('TASK_NOT_FOUND', noTaskMessage(key));
      const next = change(cur.entry);
      if (!next) return cur;
      const stored = await this.write(key, encodeWrite(next, cur.entry, this.limits.taskBytes), cur.revision);
      if (stored) return stored;
      seen = cur.revision + 1;
    }
    throw new ShroomsError('INTERNAL', `task ${key} changed too often to update; retry`);
  }

  /**
   * Applies `change` to `key` now in this process's eyes, and in the ledger within `waitMs`: with
   * the key's next `transition` when that comes first (one write for both, the events of both),
   * else on its own (deferred.ts). Returns the entry the change makes of the one this process knows
   * (its own last write until it sees another's, OwnWrites.saw; else a read) — not yet written.
   * Throws what `change` throws on it. A held change refused when it is written at last (the task
   * finished meanwhile), or whose write fails, goes to `onError`. `get` of the key, and
   * `writeDeferred`, write it first. A wait of 0 writes now.
   */
  async deferTransition(key: string, change: Change, waitMs: number, onError: (err: unknown) => void): Promise<LedgerEntry | null> {
    if (waitMs <= 0) return (await this.transition(key, change)).entry;
    const writing = this.deferred.settled(key);
    if (writing) await writing;
    const held = this.deferred.seen(key);
    const known = this.own.last(key);
    const cur = held ?? (known ? parseKnown(known) : (await this.get(key))?.entry);
    if (!cur) throw new ShroomsError('TASK_NOT_FOUND', noTaskMessage(key));
    const next = change(cur);
    if (next) this.deferred.hold(key, { change, onError }, held ? merged(held, next) : next, waitMs, this.due);
    return next;
  }

  /**
   * A task's create held back up to `waitMs` like a change (`deferTransition`): written with the
   * key's next change when that comes first (one write, the events of both), else on its own; for a
   * task whose sender is told nothing before its end. Returns it as it will be stored (revision 0:
   * not written yet). A plain `create` when this process already writes or holds the key. A held
   * create whose write fails is held again (longer each time) until it is written; one refused for
   * good (`refusedForGood`: the ledger full) is let go, and told to `onError` once (known.ts); one
   * that finds the key stored by someone else tells `onError`, its change applying to the stored task.
   */
  async deferCreate(key: string, entry: LedgerEntry, waitMs: number, onError: (err: unknown) => void): Promise<Stored | null> {
    this.refuseWhileAway(`${key} was not written`);
    if (waitMs <= 0 || this.deferred.has(key) || this.deferred.settled(key) || this.own.last(key)) return this.create(key, entry);
    this.deferred.hold(key, { create: entry, onError }, entry, waitMs, this.due);
    return { key, revision: 0, entry };
  }

  /** Writes what is held back (`deferTransition`, `deferCreate`) for `key`, or every key; a failure is told to its holder too (once). */
  async writeDeferred(key?: string): Promise<void> {
    let failed: unknown;
    for (const k of key === undefined ? this.deferred.keys() : [key]) {
      const held = this.deferred.take(k);
      if (!held) continue;
      try {
        if ('create' in held) await this.deferred.writes(k, createHeld(this.known, k, held));
        else await this.transition(k, compose(held));
      } catch (err) {
        if (!('create' in held) || !refusedForGood(err)) held.onError(err);
        failed ??= err;
      }
    }
    if (failed !== undefined) throw failed;
  }

  /** Reads the bucket's retention again into `retentionMs` (another machine's gateway may have changed it); needs STREAM.INFO. */
  async readRetention(): Promise<number> {
    this.retentionMs = await readRetention(this.nc);
    return this.retentionMs;
  }

  /**
   * Calls `follower` with every entry this process stores, once JetStream has acknowledged it: a
   * follower of its own writes (the bridge's spans) learns them here, so its watch can skip them
   * (`ownWrites: 'skip'`). Returns the unsubscribe.
   */
  followWrites(follower: (s: Stored) => void): () => void {
    return this.own.follow(follower);
  }

  /**
   * Watches keys matching `filter`: the last value of each (isUpdate false), then every change as
   * stored. `onReady` runs once the initial values are in; `onEnd` when the watch ends unstopped (its
   * consumer closed, or it failed). `only`: the changes from now on, or the initial values alone
   * (watch.ts). `ownWrites: 'skip'`: changes this process wrote and already knows (`followWrites`)
   * are not decoded nor passed on — the one back before its write's acknowledgement still is.
   */
  async watch(
    filter: string,
    onEntry: (s: Stored, isUpdate: boolean) => void,
    onReady?: () => void,
    onEnd?: (err?: unknown) => void,
    opts: { only?: 'updates' | 'initial'; ownWrites?: 'skip' } = {},
  ): Promise<() => void> {
    return watchTasks(this.nc, this.kv, filter, {
      onEntry,
      ...(onReady ? { onReady } : {}),
      ...(onEnd ? { onEnd } : {}),
      ...(opts.only ? { only: opts.only } : {}),
      own: this.own,
      ...(opts.ownWrites === 'skip' ? { skipOwn: true } : {}),
      counted: (skipped) => (skipped ? this.ownSkipped++ : this.watched++),
    });
  }
}
