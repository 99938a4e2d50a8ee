/**
 * Places reserved ahead in a window, so that a steady stream of new tasks is admitted from memory
 * instead of waiting, each, for its own compare-and-set (a round trip to nats-server on the path of
 * every new task).
 *
 * A store that admits several tasks for one key within a lease writes, with its next window, a few
 * places of its own: entries `~place:<store>:<n>` timed at the end of the lease. Until then it may
 * give each place to a new task without writing; the write that follows (when the places run out,
 * or at the lease's end) puts the task ids in their places and drops the places not given.
 *
 * Why the guard stays exact: a place is counted in the stored window, by every replica, from the
 * compare-and-set that made it — before any task takes it — and it is timed at the lease's end, so
 * a task given a place stays in the window at least as long as if it had been written when it was
 * admitted. A store reserves only while a window has room to spare (at most a quarter of what is
 * left, never the last places), so the edge of a window is still decided one compare-and-set at a
 * time. What it costs: for up to a lease, a place reserved and not yet given back counts as taken —
 * another replica meeting a window full of them waits for their lease to end before it refuses; a
 * store that dies holding places leaves them counted until they leave the window.
 */
import type { WindowEntry, WindowSpec } from './window.js';

export const PLACE_PREFIX = '~place:';

/** Most places reserved in one write. */
export const MOST_AHEAD = 64;

/** After a place's lease, how long another replica waits for its owner to give it back, ms. */
export const GIVE_BACK_GRACE_MS = 50;

/** A place's lease for a window: a tenth of it, at most a second; 0 (none) for windows under 20 ms. */
export function leaseMs(spec: WindowSpec): number {
  const ms = Math.min(1_000, Math.floor(spec.windowMs / 10));
  return ms >= 2 ? ms : 0;
}

export const isPlace = (id: string): boolean => id.startsWith(PLACE_PREFIX);

/** One store's places under one key, and the admits it has seen lately. */
export class Ahead {
  /** Places written and not given yet, usable until their `at`. */
  spare: WindowEntry[] = [];
  /** Places given, by place id: the task id that took each (with the place's time), not yet written in its place. */
  readonly given = new Map<string, WindowEntry>();
  /** Whether the stored window may hold places of this store (written and not yet dropped). */
  stored = false;
  /** A write of the given places is queued. */
  flushing = false;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When the last admit came, and the time between admits lately (a moving average), ms. */
  private lastAt = -Infinity;
  private gap = Infinity;
  private next = 0;

  constructor(
    private readonly owner: string,
    public spec: WindowSpec,
  ) {}

  /** Counts `n` admits at `now` into the rate places are reserved for. */
  admitted(n: number, now: number): void {
    ({ gap: this.gap, lastAt: this.lastAt } = this.after(n, now));
  }

  /** The moving gap and the last admit's time as `n` admits at `now` would leave them. */
  private after(n: number, now: number): { gap: number; lastAt: number } {
    let gap = this.gap;
    for (let i = 0; i < n; i++) {
      const since = i === 0 ? now - this.lastAt : 0;
      gap = Number.isFinite(gap) ? 0.8 * gap + 0.2 * since : since;
    }
    return { gap, lastAt: n > 0 ? now : this.lastAt };
  }

  /** A spare place for `id`, if one is usable at `now`; it is given at once. */
  give(id: string, now: number): WindowEntry | undefined {
    while (this.spare.length && this.spare[0]!.at <= now) this.spare.shift();
    const place = this.spare.shift();
    if (!place) return undefined;
    this.given.set(place.id, { id, at: place.at });
    return place;
  }

  /** Whether a place was given to `id` and not yet written (at most MOST_AHEAD to look through). */
  holds(id: string): boolean {
    for (const taken of this.given.values()) if (taken.id === id) return true;
    return false;
  }

  mine(id: string): boolean {
    return id.startsWith(`${PLACE_PREFIX}${this.owner}:`);
  }

  /**
   * The window as this store would write it: each given place holding its task id (added, with the
   * place's time, when the place is gone — a reset emptied the window), its other places dropped.
   * The spare places are withdrawn: none is given until the next write brings new ones.
   */
  settled(entries: readonly WindowEntry[]): WindowEntry[] {
    this.spare = [];
    const out: WindowEntry[] = [];
    const placed = new Set<string>();
    for (const e of entries) {
      if (!this.mine(e.id)) out.push(e);
      else {
        const taken = this.given.get(e.id);
        if (taken !== undefined) {
          out.push(taken);
          placed.add(e.id);
        }
      }
    }
    if (placed.size < this.given.size) {
      const present = new Set(out.map((e) => e.id));
      for (const [place, taken] of this.given) if (!placed.has(place) && !present.has(taken.id)) out.push(taken);
    }
    return out;
  }

  /** A window from `settled` is stored with `places`: the given places are written, these are spare. */
  written(places: WindowEntry[]): void {
    this.given.clear();
    this.spare = [...places];
    this.stored = places.length > 0;
  }

  /**
   * How many places to reserve with a write that leaves `live` entries in the window: as many as
   * admits are expected within a lease at the recent rate (none when they come further apart, or
   * stopped coming), at most a quarter of the room left. `coming`: admits at `now` that the write
   * carries, counted into the rate only once it is stored (`admitted`), so a write that loses its
   * race does not count them twice.
   */
  wanted(live: number, now: number, coming = 0): number {
    const lease = leaseMs(this.spec);
    const { gap, lastAt } = this.after(coming, now);
    if (!lease || now - lastAt > lease || !(gap < lease)) return 0;
    const expected = gap > 0 ? Math.floor((0.8 * lease) / gap) : MOST_AHEAD;
    return Math.max(0, Math.min(expected, MOST_AHEAD, Math.floor((this.spec.max - live) / 4)));
  }

  /** `n` new places, timed at the end of a lease from `now`. */
  places(n: number, now: number): WindowEntry[] {
    const at = now + leaseMs(this.spec);
    return Array.from({ length: n }, () => ({ id: `${PLACE_PREFIX}${this.owner}:${this.next++}`, at }));
  }
}

/** The latest time a place of another store in `entries` may still be given back (0: none may). */
export function foreignPlacesPending(entries: readonly WindowEntry[], ahead: Ahead | undefined, now: number): number {
  let until = 0;
  for (const e of entries)
    if (isPlace(e.id) && !ahead?.mine(e.id) && e.at + GIVE_BACK_GRACE_MS > now) until = Math.max(until, e.at + GIVE_BACK_GRACE_MS);
  return until;
}
