/**
 * Writes from what this process knows of a key, without reading it first: a compare-and-set from
 * its own last write (`fromKnown`) and a create it held back (`createHeld`, deferred.ts). The
 * Ledger's own, in a file of their own.
 */
import { ShroomsError } from '@shrooms/protocol';
import type { Encoded } from './codec.js';
import type { LedgerEntry, Stored } from './entry.js';
import type { OwnWrites } from './own-writes.js';
import { onCreate, type Change, type DeferredChanges, type Held } from './deferred.js';

/** What of the Ledger these writes use. */
export interface KnownWriter {
  own: OwnWrites;
  deferred: DeferredChanges;
  /** The entry as one write over `base` (none: a create) stores it, with its write ids, and its bytes; LIMIT_EXCEEDED when too big. */
  encode(entry: LedgerEntry, base: LedgerEntry | undefined): Encoded;
  /**
   * One write with its retries: a create (`expected` 0) or a compare-and-set; the entry stored (or
   * the key as it stands when another's change is on top of this stored write), null when refused.
   */
  write(key: string, encoded: Encoded, expected: number): Promise<Stored | null>;
  /** Writes what is held for the key (its hold's wait ended). */
  due(key: string): void;
}

const dec = new TextDecoder();

/** The entry this process wrote last for a key, from the bytes it remembers (a fresh object each time). */
export const parseKnown = (known: { data: Uint8Array }): LedgerEntry => JSON.parse(dec.decode(known.data)) as LedgerEntry;

/**
 * One compare-and-set from the value this process last wrote for `key`, without reading it
 * first (the bridge changes a task several times in a row). The revision check makes it exact:
 * if anyone wrote since, the update is refused and `transition` reads as usual. Anything short of
 * a clean write from the known value — `change` declining or refusing, a refused update — returns
 * null so that the decision is taken again on a fresh read, never on a remembered one.
 */
export async function fromKnown(
  w: KnownWriter,
  key: string,
  known: { revision: number; data: Uint8Array },
  change: Change,
): Promise<Stored | null> {
  let encoded: Encoded;
  try {
    const base = parseKnown(known);
    const next = change(base);
    if (!next) return null;
    encoded = w.encode(next, base);
  } catch {
    return null;
  }
  const stored = await w.write(key, encoded, known.revision).catch((err: unknown) => {
    w.own.forget(key);
    throw err;
  });
  if (!stored) w.own.forget(key);
  return stored;
}

/**
 * Whether a write was refused for good: trying it again changes nothing (a full ledger, a task too
 * big — a ShroomsError that is not retryable). NATS away, a timeout or JetStream's own errors are not.
 */
export const refusedForGood = (err: unknown): boolean => err instanceof ShroomsError && !err.retryable;

/**
 * A held create written, with `then` (the key's next change) applied: one write with the events of
 * both. One that cannot be written now is held again (deferred.ts `putBack`), so the task is not
 * lost while this process lives; one refused for good (`refusedForGood`: the ledger is full) is let
 * go and its holder told, once. Null when the key was stored meanwhile by someone else (its holder
 * is told, and `then` is for the caller to apply to what is stored).
 */
export async function createHeld(w: KnownWriter, key: string, held: Held & { create: LedgerEntry }, then?: Change): Promise<Stored | null> {
  let encoded: Encoded;
  try {
    encoded = w.encode(onCreate(held.create, then), undefined);
  } catch (err) {
    // `then` refused (or made too big a task): the create alone still waits to be written. The
    // create alone too big is let go.
    if (then) w.deferred.putBack(key, held, w.due);
    else if (refusedForGood(err)) held.onError(err);
    throw err;
  }
  const stored = await w.write(key, encoded, 0).catch((err: unknown) => {
    // A full ledger stays full for any retry soon: the task is refused, as a plain create is, and its
    // holder drops it; kept, it would be written whenever room came back, long after its sender was
    // told it was refused.
    if (refusedForGood(err)) held.onError(err);
    else w.deferred.putBack(key, held, w.due);
    throw err;
  });
  if (stored) return stored;
  held.onError(new ShroomsError('INTERNAL', `task ${key} was stored by another writer before this process wrote its create`));
  return null;
}
