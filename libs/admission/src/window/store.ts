/**
 * Sliding windows kept in a JetStream KV bucket and changed only by compare-and-set (casPut of
 * @shrooms/runtime, exact on an R3 bucket too): every write names the revision it read, so two guard
 * replicas (or two admits in one) can never both take the last place in a window. A lost race
 * re-reads and decides again until the request's deadline.
 *
 * The window this store wrote last under a key is remembered (value and revision): the next admit
 * adds to it and writes on that revision without reading first, which with one guard replica is
 * nearly always right. Only a write is ever taken from memory, and the compare-and-set checks the
 * revision, so a remembered window another replica has since replaced costs one refused write and
 * the usual read — never a wrong count. A refusal ("full") or "already admitted" read from memory is
 * read again before it is answered — unless a read that began after the request arrived already
 * showed the window full: no reset or give-back the request could have seen is missed then, and a
 * flood of new tasks (what the loop guard is for) costs one read, not one per refusal.
 *
 * When new tasks for a key come often, a write also reserves places ahead (ahead.ts): the next
 * admits take them from memory, without a write each, and a later write puts their ids in them.
 *
 * Over 300 lines because settling a batch and reserving ahead share the key's lock, the window
 * remembered and every write: apart, they would pass all of that back and forth.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KV } from '@nats-io/kv';
import { ShroomsError } from '@shrooms/protocol';
import { casPut, type Logger } from '@shrooms/runtime';
import { Ahead, foreignPlacesPending, isPlace } from './ahead.js';
import { keyedLock } from './keyed-lock.js';
import { decide, decodeWindow, encodeWindow, live, retryAfterMs, type Decision, type WindowEntry, type WindowSpec } from './window.js';

export type Reservation = { ok: true; counted: boolean; count: number } | { ok: false; count: number; retryAfterMs: number };

interface Admit {
  id: string;
  spec: WindowSpec;
  deadline: number;
  arrivedAt: number;
  resolve: (r: Reservation) => void;
  reject: (err: unknown) => void;
}

export interface WindowState {
  /** Entries counted in the window: admitted tasks and places another admitter holds (`reserved`). */
  count: number;
  /** The admitted tasks' ids, oldest first. */
  ids: string[];
  /** Places another admitter reserved ahead and has not yet given to a task or given back (ahead.ts). */
  reserved: number;
  oldestAt?: number;
  retryAfterMs: number;
}

export interface WindowStoreOptions {
  /** Clock for window times, ms since the epoch. Default Date.now. */
  now?: () => number;
  log: Logger;
}

/**
 * The clock of "a read began after the request arrived": sub-millisecond, so a read and an arrival
 * within one millisecond are still told apart (Date.now() would call them equal).
 */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

/**
 * Keys whose last written (or read) window, and reserving ahead, is remembered (the oldest forgotten
 * first; a reserving that holds places is not forgotten).
 */
export const REMEMBERED_KEYS = 1024;

export class WindowStore {
  private readonly withKey = keyedLock();
  /** Admits waiting for their key's turn, by key: the next turn settles them as one batch. */
  private readonly waiting = new Map<string, Admit[]>();
  private readonly now: () => number;
  /** The window this store last wrote under each key, with the revision the write got. */
  private readonly written = new Map<string, { entries: WindowEntry[]; revision: number }>();
  /** The window this store last read under each key, with when that read began (preciseNow). */
  private readonly seen = new Map<string, { entries: WindowEntry[]; startedAt: number }>();
  /** Places this store reserved ahead under each key (ahead.ts). */
  private readonly ahead = new Map<string, Ahead>();
  /** Names this store's places apart from other replicas' (and from its own before a restart). */
  private readonly owner = randomBytes(4).toString('hex');
  /** Closing: no place is reserved any more. */
  private closed = false;

  constructor(
    readonly kv: KV,
    private readonly opts: WindowStoreOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * Records `id` in the window under `key` if there is room. Idempotent: an id already in the window
   * is admitted again without counting. `deadline` (Date.now() ms) bounds the retries after lost
   * races; past it nothing is written and GUARD_UNAVAILABLE is thrown. `arrivedAt` (preciseNow,
   * default now): when the request arrived, or later; a read begun after it that showed the window
   * full answers it without another.
   *
   * Admits for one key that arrive while it is busy wait together and are settled as one batch:
   * decided in the order they came against the same window and written in one compare-and-set, so
   * a burst costs a few writes, not one round trip each in a row.
   */
  reserve(key: string, id: string, spec: WindowSpec, deadline: number, arrivedAt = preciseNow()): Promise<Reservation> {
    // Past its deadline a request takes no place either: the settling below refuses it.
    const placed = Date.now() > deadline ? undefined : this.fromAhead(key, id, spec);
    if (placed) return Promise.resolve(placed);
    return new Promise<Reservation>((resolve, reject) => {
      const admit: Admit = { id, spec, deadline, arrivedAt, resolve, reject };
      const waiting = this.waiting.get(key);
      if (waiting) return void waiting.push(admit);
      const batch = [admit];
      this.waiting.set(key, batch);
      this.withKey(key, () => {
        if (this.waiting.get(key) === batch) this.waiting.delete(key);
        return this.settle(key, batch);
      }).catch((err: unknown) => {
        for (const a of batch) a.reject(err);
      });
    });
  }

  /**
   * Settles a batch (under the key's lock). Only additions are taken from the window this store
   * wrote last; "already admitted" and "full" are answered from a read (or from a read begun after
   * the request arrived), and only when the window they were decided on holds no addition of this
   * batch still unwritten — else they are decided again after that write.
   */
  private async settle(key: string, batch: Admit[]): Promise<void> {
    let open = batch;
    const ahead = this.aheadOf(key, batch[0]!.spec);
    const mine = this.written.get(key);
    if (mine) {
      const plan = this.plan(key, ahead.settled(mine.entries), open);
      open = plan.kept;
      if (plan.adds.length && (await this.commit(key, plan, mine.revision, ahead)))
        open = [...plan.decided.map((x) => x.a), ...plan.undecided];
    }
    const fresh = this.seen.get(key);
    if (fresh && !foreignPlacesPending(fresh.entries, ahead, this.now()))
      open = open.filter((a) => {
        if (fresh.startedAt <= a.arrivedAt) return true;
        const d = decide(fresh.entries, a.id, a.spec, this.now());
        if (d.kind !== 'full') return true;
        a.resolve({ ok: false, count: d.count, retryAfterMs: d.retryAfterMs });
        return false;
      });
    // Refusals that places of another replica may yet make room for: decided again after their lease.
    let held: Admit[] = [];
    let heldUntil = 0;
    for (;;) {
      for (let attempt = 0; open.length;) {
        const { entries, revision } = await this.read(key);
        const plan = this.plan(key, ahead.settled(entries), open);
        const now = this.now();
        const pending = foreignPlacesPending(entries, ahead, now);
        for (const { a, d } of plan.decided) {
          if (d.kind === 'present') a.resolve({ ok: true, counted: false, count: d.count });
          else if (d.kind === 'full' && pending && pending < a.deadline) {
            held.push(a);
            heldUntil = Math.max(heldUntil, pending);
          } else if (d.kind === 'full') a.resolve({ ok: false, count: d.count, retryAfterMs: d.retryAfterMs });
        }
        if (!plan.adds.length) break;
        if (await this.commit(key, plan, revision, ahead)) open = plan.undecided;
        else {
          const settled = new Set(plan.decided.map((x) => x.a));
          open = plan.kept.filter((a) => !settled.has(a));
          await backoff(attempt++);
        }
      }
      if (!held.length) return;
      await sleep(Math.max(1, heldUntil - this.now()));
      [open, held, heldUntil] = [held, [], 0];
    }
  }

  /**
   * Decides `open` in order against `entries`: the additions (with the window they make), the
   * answers decided on `entries` alone (before any addition), the rest, and all those still open
   * (`kept`, in order). An addition whose deadline has passed is refused with GUARD_UNAVAILABLE
   * (nothing is written for it) and left out.
   */
  private plan(key: string, entries: WindowEntry[], open: Admit[]): Plan {
    const now = this.now();
    let next = entries;
    const adds: { a: Admit; count: number }[] = [];
    const decided: { a: Admit; d: Decision }[] = [];
    const undecided: Admit[] = [];
    const kept: Admit[] = [];
    for (const a of open) {
      const d = decide(next, a.id, a.spec, now);
      if (d.kind === 'add' && Date.now() > a.deadline) {
        a.reject(overDeadline(key));
        continue;
      }
      kept.push(a);
      if (d.kind === 'add') {
        next = d.next;
        adds.push({ a, count: d.count });
      } else if (adds.length === 0) decided.push({ a, d });
      else undecided.push(a);
    }
    return { next, adds, decided, undecided, kept };
  }

  /**
   * Writes a plan's additions in one compare-and-set (with places reserved ahead, when admits come
   * often enough) and admits them; false when another writer got there first.
   */
  private async commit(key: string, plan: Plan, revision: number, ahead: Ahead): Promise<boolean> {
    const now = this.now();
    const places = this.closed
      ? []
      : ahead.places(ahead.wanted(live(plan.next, now, ahead.spec.windowMs).length, now, plan.adds.length), now);
    if (!(await this.write(key, places.length ? [...plan.next, ...places] : plan.next, revision))) return false;
    ahead.admitted(plan.adds.length, now);
    this.wrote(key, ahead, places);
    for (const { a, count } of plan.adds) a.resolve({ ok: true, counted: true, count });
    return true;
  }

  /**
   * A new task admitted from a place this store reserved ahead, without a write (ahead.ts); none
   * when there is no usable place, a batch is waiting, or the id may be in the window already.
   */
  private fromAhead(key: string, id: string, spec: WindowSpec): Reservation | undefined {
    const ahead = this.ahead.get(key);
    const mine = this.written.get(key);
    if (!ahead?.spare.length || !mine || this.waiting.has(key) || ahead.holds(id)) return undefined;
    if (ahead.spec.max !== spec.max || ahead.spec.windowMs !== spec.windowMs) return undefined;
    if (mine.entries.some((e) => e.id === id)) return undefined;
    const now = this.now();
    if (!ahead.give(id, now)) return undefined;
    ahead.admitted(1, now);
    // The places ran out: the write that puts these ids in them reserves the next ones.
    if (!ahead.spare.length) this.flushSoon(key, ahead, true);
    return { ok: true, counted: true, count: live(mine.entries, now, spec.windowMs).length - ahead.spare.length };
  }

  /** This store's reserving under `key`, made on first use (the oldest of too many forgotten). */
  private aheadOf(key: string, spec: WindowSpec): Ahead {
    let ahead = this.ahead.get(key);
    if (!ahead) {
      ahead = new Ahead(this.owner, spec);
      this.ahead.set(key, ahead);
      if (this.ahead.size > REMEMBERED_KEYS) this.forgetAhead(key);
    }
    ahead.spec = spec;
    return ahead;
  }

  /**
   * Forgets the oldest reserving (not `key`'s) that holds no place. One that does is kept: its
   * given places name tasks not yet written, and the next under its key — same owner, so its
   * places look its own — would drop them from the window, and admit that many more.
   */
  private forgetAhead(key: string): void {
    for (const [k, ahead] of this.ahead) {
      if (k === key || ahead.given.size || ahead.stored) continue;
      clearTimeout(ahead.timer);
      this.ahead.delete(k);
      return;
    }
  }

  /** After a write of `ahead.settled(...)` with `places`: the lease of the new places starts. */
  private wrote(key: string, ahead: Ahead, places: WindowEntry[]): void {
    ahead.written(places);
    clearTimeout(ahead.timer);
    ahead.timer = undefined;
    if (!places.length) return;
    // At the lease's end the places not given are dropped (and the given ones written); as some
    // were left, admits came slower than reserved for: none are reserved again then.
    ahead.timer = setTimeout(() => this.flushSoon(key, ahead, false), Math.max(1, places[0]!.at - this.now()) + 1);
    ahead.timer.unref?.();
  }

  private flushSoon(key: string, ahead: Ahead, again: boolean): void {
    if (ahead.flushing) return;
    ahead.flushing = true;
    this.withKey(key, () => {
      ahead.flushing = false;
      return this.flushAhead(key, ahead, again);
    }).catch((err: unknown) => this.opts.log.warn({ err, key }, 'could not write the places given ahead; they stay counted'));
  }

  /**
   * Writes the ids of the places given in them and drops the places not given (under the key's
   * lock); with `again`, reserves new ones if admits still come often. Nothing when this store has
   * no places in the stored window.
   */
  private async flushAhead(key: string, ahead: Ahead | undefined, again: boolean): Promise<void> {
    if (!ahead || this.ahead.get(key) !== ahead || (!ahead.given.size && !ahead.stored)) return;
    for (let attempt = 0; ; attempt++) {
      const base = this.written.get(key) ?? (await this.read(key));
      const now = this.now();
      const next = live(ahead.settled(base.entries), now, ahead.spec.windowMs);
      const places = again && !this.closed ? ahead.places(ahead.wanted(next.length, now), now) : [];
      if (await this.write(key, [...next, ...places], base.revision)) return this.wrote(key, ahead, places);
      if (attempt >= 5) throw new Error(`window ${key} kept changing`);
      await backoff(attempt);
    }
  }

  /** Takes `id` out of the window again (an admit refused by a later check). */
  release(key: string, id: string, deadline: number): Promise<void> {
    return this.withKey(key, async () => {
      await this.flushAhead(key, this.ahead.get(key), false);
      for (let attempt = 0; ; attempt++) {
        const { entries, revision } = await this.read(key);
        if (!entries.some((e) => e.id === id)) return;
        if (Date.now() > deadline) throw overDeadline(key);
        if (
          await this.write(
            key,
            entries.filter((e) => e.id !== id),
            revision,
          )
        )
          return;
        await backoff(attempt);
      }
    });
  }

  async inspect(key: string, spec: WindowSpec): Promise<WindowState> {
    await this.withKey(key, () => this.flushAhead(key, this.ahead.get(key), false));
    const now = this.now();
    const entries = live((await this.read(key)).entries, now, spec.windowMs);
    // This store's places were written out above; another admitter's still count, but name no task.
    const ids = entries.filter((e) => !isPlace(e.id)).map((e) => e.id);
    return {
      count: entries.length,
      ids,
      reserved: entries.length - ids.length,
      ...(entries[0] ? { oldestAt: entries[0].at } : {}),
      retryAfterMs: entries.length >= spec.max ? retryAfterMs(entries, now, spec.windowMs) : 0,
    };
  }

  /**
   * Gives back every place not given and writes the ids of those given (on shutdown), so a
   * stopped process leaves no place counted; new places are reserved no more. Each key's write
   * is best effort within `deadlineMs`.
   */
  async close(deadlineMs = 1_000): Promise<void> {
    this.closed = true;
    const keys = [...this.ahead.keys()];
    const all = Promise.allSettled(keys.map((key) => this.withKey(key, () => this.flushAhead(key, this.ahead.get(key), false))));
    await Promise.race([all, sleep(deadlineMs, undefined, { ref: false })]);
    for (const ahead of this.ahead.values()) clearTimeout(ahead.timer);
  }

  async reset(key: string): Promise<void> {
    this.written.delete(key);
    this.seen.delete(key);
    clearTimeout(this.ahead.get(key)?.timer);
    this.ahead.delete(key);
    await this.kv.delete(key);
  }

  private async read(key: string): Promise<{ entries: WindowEntry[]; revision: number }> {
    const startedAt = preciseNow();
    const read = await this.readStored(key);
    this.remember(this.seen, key, { entries: read.entries, startedAt });
    return read;
  }

  private async readStored(key: string): Promise<{ entries: WindowEntry[]; revision: number }> {
    const e = await this.kv.get(key);
    if (!e) return { entries: [], revision: 0 };
    if (e.operation !== 'PUT' || e.value.length === 0) return { entries: [], revision: e.revision };
    try {
      return { entries: decodeWindow(e.string()), revision: e.revision };
    } catch (err) {
      this.opts.log.error({ err, key }, 'window value is not a window; refusing until it is reset');
      throw new ShroomsError('INTERNAL', `the guard's window ${key} is unreadable; reset it through the control endpoint`);
    }
  }

  /** One compare-and-set; false when another writer got there first. Remembers what it wrote. */
  private async write(key: string, entries: WindowEntry[], revision: number): Promise<boolean> {
    this.written.delete(key);
    // What a read showed is older than this write, whichever way it goes.
    this.seen.delete(key);
    const next = await casPut(this.kv, key, enc.encode(encodeWindow(entries)), revision);
    if (next === null) return false;
    this.remember(this.written, key, { entries, revision: next });
    return true;
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > REMEMBERED_KEYS) map.delete(map.keys().next().value!);
  }
}

/** A batch decided in order against one window (`plan`). */
interface Plan {
  /** The window with the additions. */
  next: WindowEntry[];
  adds: { a: Admit; count: number }[];
  /** Answered on the window alone, before any addition. */
  decided: { a: Admit; d: Decision }[];
  /** Decided after an addition: decided again once it is written. */
  undecided: Admit[];
  /** Every admit still open, in order. */
  kept: Admit[];
}

const enc = new TextEncoder();

function overDeadline(key: string): ShroomsError {
  return new ShroomsError('GUARD_UNAVAILABLE', `the guard could not settle window ${key} in time; nothing was admitted`);
}

/** Jittered, growing pause after a lost race (1–2 ms, up to 20–40 ms). */
function backoff(attempt: number): Promise<void> {
  const base = Math.min(20, 2 ** attempt);
  return sleep(base + Math.random() * base);
}
