import { randomBytes } from 'node:crypto';
import type { StreamResponse, Task } from '@shrooms/protocol';

/**
 * One value in the ledger: the task as it stands after a change, and the A2A events that change
 * produced (streams replay these, in order; a creation's `task` event names the task — id, context,
 * status — and streams, which send the whole task first, pass it over). `v` counts changes of this
 * task from 1.
 */
export interface LedgerEntry {
  v: number;
  task: Task;
  events: StreamResponse[];
  /**
   * The version `events` start after, when that is not `v - 1`: a write of several changes at once
   * (a start held back and the result that came before it was written) carries the events of all,
   * and a stream that saw `from` passes them all on instead of taking a gap for missed changes.
   */
  from?: number;
  /**
   * Ids of the last writes that made this entry, newest last (at most WRITE_IDS): a write whose
   * acknowledgement was lost finds its id here when another writer's change is already on top of
   * it, and so knows it was stored (write.ts) instead of applying its change a second time.
   */
  w?: string[];
}

/** Write ids an entry keeps (`LedgerEntry.w`): more writes on top of a lost acknowledgement than one read-back sees. */
export const WRITE_IDS = 4;

/** Bytes of one write id (8 characters of base64url): a clash among one key's last writes is out of reach. */
const WRITE_ID_BYTES = 6;
/** Write ids drawn from one read of the system's randomness (a system call each, one per write before). */
const POOL_IDS = 512;
let pool = Buffer.alloc(0);
let pooled = 0;

/** A fresh random write id, from a pool refilled every POOL_IDS ids (as `randomUUID` pools its bytes). */
export function writeId(): string {
  if (pooled === 0) {
    pool = randomBytes(WRITE_ID_BYTES * POOL_IDS);
    pooled = POOL_IDS;
  }
  pooled -= 1;
  const at = pooled * WRITE_ID_BYTES;
  return pool.toString('base64url', at, at + WRITE_ID_BYTES);
}

/** `entry` as one write over `base` (none for a create) makes it: `base`'s write ids, this write's fresh one last. */
export function stamped(entry: LedgerEntry, base: LedgerEntry | undefined): { entry: LedgerEntry; id: string } {
  const id = writeId();
  return { entry: { ...entry, w: [...(base?.w ?? []).slice(1 - WRITE_IDS), id] }, id };
}

/** The version an entry's events start after (see `LedgerEntry.from`). */
export const eventsFrom = (e: LedgerEntry): number => e.from ?? e.v - 1;

/** `after` (a change applied to `first`) as one write with `first`: the events of both, from where `first`'s start. */
export function merged(first: LedgerEntry, after: LedgerEntry): LedgerEntry {
  return { ...after, events: [...first.events, ...after.events], from: eventsFrom(first) };
}

/** A ledger entry together with its KV revision (the stream sequence), for compare-and-set. */
export interface Stored {
  key: string;
  revision: number;
  entry: LedgerEntry;
  /**
   * When the bucket stored this revision, ms (0 or absent when not read from the bucket): the
   * ledger lets a task go `finishedRetentionMs` after its last write, which a write that changes no
   * status (an ack, a note of its children) puts later than its status time.
   */
  storedAt?: number;
}
