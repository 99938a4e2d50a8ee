/**
 * What a process knows of its own ledger writes: the bytes and revision of its latest write per key
 * (so `transition` can change a task it wrote last without reading it), the revisions it stored
 * lately and the writes not yet acknowledged (so a watch can skip its own changes without decoding
 * them), and who follows them (`follow`).
 */
import type { StoredMessage } from './codec.js';
import type { Stored } from './entry.js';

/** Keys whose last write is remembered (about 1–2 KB each for a typical task). */
const WRITTEN_KEYS = 1024;
/** Own revisions a watch recognises once acknowledged: far more than a watch lags behind. */
const OWN_REVISIONS = 4096;

interface InFlight {
  data: Uint8Array;
  /** Watched changes held back as this write's own until it ends. */
  echoes: { revision: number; deliver: () => void }[];
}

export class OwnWrites {
  /** Revision and bytes of the latest write per key, newest last (bounded). */
  private written = new Map<string, { revision: number; data: Uint8Array }>();
  /** Revisions (stream sequences, unique across keys) of the latest writes, oldest first (bounded). */
  private revisions = new Set<number>();
  /** Writes sent and not yet acknowledged, by key (the latest per key). */
  private inflight = new Map<string, InFlight>();
  private followers = new Set<(s: Stored) => void>();

  /** The latest write of `key`, if remembered. */
  last(key: string): { revision: number; data: Uint8Array } | undefined {
    return this.written.get(key);
  }

  /** Forgets the latest write of `key` (the key moved on, or the write's outcome is unknown). */
  forget(key: string): void {
    this.written.delete(key);
  }

  /**
   * `key` was seen at `revision` (a read, a watched change), or gone (none): a remembered write
   * older than that is forgotten. Someone else changed the task since, and what this process wrote
   * is no longer what it is — a change applied to it (Ledger.deferTransition) would be built from
   * the old content.
   */
  saw(key: string, revision?: number): void {
    const mine = this.written.get(key);
    if (mine && (revision === undefined || mine.revision < revision)) this.written.delete(key);
  }

  /**
   * Runs `write` (which returns the revision it stored, or anything else when it cannot say) as the
   * write of `data` to `key`: a watched change with those bytes that comes back before it ends is
   * held back, and passed on only if the write did not end as that revision (someone's change after
   * all, or a write stored though it seemed to fail).
   */
  async sending<T extends number | object | null>(key: string, data: Uint8Array, write: () => Promise<T>): Promise<T> {
    const pending: InFlight = { data, echoes: [] };
    this.inflight.set(key, pending);
    let revision: number | null = null;
    try {
      const r = await write();
      if (typeof r === 'number') revision = r;
      return r;
    } finally {
      if (this.inflight.get(key) === pending) this.inflight.delete(key);
      for (const echo of pending.echoes) if (echo.revision !== revision) queueMicrotask(echo.deliver);
    }
  }

  /** A write was stored: remembers its bytes (not the object, which callers may change) and tells the followers. */
  stored(s: Stored, data: Uint8Array): Stored {
    this.written.delete(s.key);
    this.written.set(s.key, { revision: s.revision, data });
    if (this.written.size > WRITTEN_KEYS) this.written.delete(this.written.keys().next().value!);
    this.revisions.add(s.revision);
    if (this.revisions.size > OWN_REVISIONS) this.revisions.delete(this.revisions.values().next().value!);
    for (const f of this.followers) f(s);
    return s;
  }

  /** Calls `follower` with every write stored from now on; returns the unsubscribe. */
  follow(follower: (s: Stored) => void): () => void {
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }

  /**
   * Whether a watched change is an own write: one already acknowledged, or one whose acknowledgement
   * has not come yet (its bytes are the write's) — held back until the write ends, and passed on by
   * `deliver` if it did not end as that revision.
   */
  isOwn(e: StoredMessage, deliver: () => void): boolean {
    if (this.revisions.has(e.revision)) return true;
    const pending = this.inflight.get(e.key);
    if (!pending || e.operation !== 'PUT' || !sameBytes(e.value, pending.data)) return false;
    pending.echoes.push({ revision: e.revision, deliver });
    return true;
  }
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
}
