/** One ledger write with its retries (Ledger's `write`): what it does when JetStream does not answer. */
import type { KV } from '@nats-io/kv';
import { ShroomsError } from '@shrooms/protocol';
import { casPut, isStreamFull, isTransientJetStreamError } from '@shrooms/runtime';
import { decode, type StoredMessage } from './codec.js';
import type { Stored } from './entry.js';
import { sameBytes } from './own-writes.js';
import { readAtLeast } from './read.js';

/**
 * How long one write keeps trying while JetStream does not answer (a leader being elected, NATS
 * away), at most 8 attempts: past it the write fails and its caller decides (the bridge keeps a
 * worker's update until the ledger answers).
 */
export const WRITE_DEADLINE_MS = 60_000;

export interface WriteHooks {
  /** Throws when the write is not to be tried now (NATS known to be away); `what` says what was done. */
  refuse(what: string): void;
  /** The bucket's most tasks (Ledger.retained), said in the refusal of a create when the ledger is full. */
  retained: number | undefined;
}

/** The refusal of a new task when the ledger holds `retainedTasks` already. */
function ledgerFull(max: number | undefined): ShroomsError {
  const message = `the ledger holds its limit of ${max ?? 'retained'} tasks; new ones fit again as finished tasks age out`;
  return new ShroomsError('LIMIT_EXCEEDED', message, { limit: 'retainedTasks', ...(max !== undefined ? { max } : {}) });
}

/** The task in `e` when it was written on top of the write `id` (its `w` names it; entry.ts). */
function builtOn(e: StoredMessage, id: string): Stored | undefined {
  try {
    const s = decode(e);
    return s?.entry.w?.includes(id) ? s : undefined;
  } catch {
    return undefined; // not a task entry: not this write's
  }
}

/**
 * A create (`expected` 0) or a compare-and-set on `expected`, of the write `id` (its entry's last
 * `w`). Returns the new revision, or null when the key has moved on (someone else wrote). A write
 * that fails ambiguously — a timeout while a stream leader is being elected — may have been stored:
 * it is read back, and sent again only when it surely was not; when another writer's change is on
 * top of it already, the key as it now stands is returned (it holds this write's change). So a
 * worker's result is neither lost nor applied twice.
 */
export async function writeOnce(
  kv: KV,
  key: string,
  data: Uint8Array,
  expected: number,
  id: string,
  hooks: WriteHooks,
): Promise<number | Stored | null> {
  const deadline = Date.now() + WRITE_DEADLINE_MS;
  let delay = 100;
  for (let attempt = 1; ; attempt++) {
    // A write sent before may still be stored when NATS is back; its caller finds out then.
    hooks.refuse(attempt === 1 ? `${key} was not written` : `a write of ${key} may be stored when it is back`);
    let moved: boolean;
    try {
      const revision = await casPut(kv, key, data, expected);
      if (revision !== null) return revision;
      // Refused, or answered as a duplicate — which may be this very write sent before a timeout.
      moved = true;
    } catch (err) {
      if (expected === 0 && isStreamFull(err)) throw ledgerFull(hooks.retained);
      if (!isTransientJetStreamError(err) || attempt >= 8 || Date.now() >= deadline) throw err;
      moved = false;
      await new Promise((r) => setTimeout(r, (delay = Math.min(delay * 2, 2_000))));
    }
    // Refused, the key is past `expected`; timed out, it is there at least (a lagging replica must
    // not answer for it: an older revision would pass for "not stored" and the write go out twice).
    // One read, not retried: one that fails leaves the answer to the next compare-and-set.
    const now = await readAtLeast(kv, key, moved ? expected + 1 : expected, { once: true }).then(
      (r) => r.e,
      () => undefined,
    );
    if (now && now.operation === 'PUT' && sameBytes(now.value, data)) return now.revision;
    const over = now && now.operation === 'PUT' && now.revision > expected ? builtOn(now, id) : undefined;
    if (over) return over;
    if (moved || (now && now.revision !== expected)) return null;
  }
}
