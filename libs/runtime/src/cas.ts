/**
 * Compare-and-set on a JetStream KV key that is exact on a replicated stream — the one primitive
 * the loop guard's windows, the scheduler's claims and the ledger's transitions write through.
 *
 * Why not `kv.update(key, value, revision)`: on nats-server 2.9 the stream leader of a clustered
 * (R3) stream checks `Nats-Expected-Last-Subject-Sequence` against what it has *applied*, so
 * proposals still in flight are invisible and several writers on one revision all pass (measured on
 * 2.9.10, 3 nodes, 300 trials of 20 concurrent updates on one revision: never exactly one, 7–20
 * succeeded; on one node, always one). What the same measurement found exact on R3: a create on a
 * fresh subject (expected sequence 0 is checked when the entry is applied, in log order), the
 * stream-wide `Nats-Expected-Last-Sequence`, and `Nats-Msg-Id` de-duplication (staged by the leader
 * as it proposes). So an update here is the usual per-subject expectation plus a message id named
 * after the key and the revision it replaces (`<key>@<revision>`): of all writers on one revision
 * the leader lets one through and answers the others as duplicates (a lost race); a writer on a
 * revision older than the de-duplication window (2 min by default) is refused by the per-subject
 * check, whose blind spot is only the milliseconds a proposal is in flight. On one node both checks
 * hold anyway, so the same code runs everywhere. docs/reliability.md has the figures.
 *
 * Reads of an R3 bucket with direct get may come from a replica that lags by a few messages: a
 * decision taken on one fails here and is taken again on a fresh read, as after any lost race.
 */
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Bucket, type KV } from '@nats-io/kv';
import { Empty, headers } from '@nats-io/nats-core';

/** The put was refused because the key is no longer at the expected revision (or already exists). */
export function isCasConflict(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/** JetStream's `JSStreamStoreFailedF`: a store refused a message (the server names no finer code). */
const STREAM_STORE_FAILED = 10077;
/** nats-server's ErrMaxMsgs, the description of a store failure that is the stream's `max_msgs`. */
const MAX_MESSAGES = 'maximum messages exceeded';

/**
 * The stream holds its `max_msgs` and discards new messages: this write is refused for good (until
 * messages age out), not for a while. By the API error's class and code; the server tells this
 * store failure from its others (max bytes, per subject, disk) only by the description it
 * sends as the API error's own field, compared whole — never a pattern over a wrapped message.
 */
export function isStreamFull(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === STREAM_STORE_FAILED && err.apiError().description === MAX_MESSAGES;
}

function bucketOf(kv: KV): Bucket {
  if (!(kv instanceof Bucket)) throw new TypeError('compare-and-set needs a KV bucket of @nats-io/kv');
  return kv;
}

/**
 * Writes `data` under `key` only if the key is still at `revision`. Returns the new revision, or
 * null when another writer got there first (then read again and decide again). A timeout may mean
 * the write was stored: sending the same bytes on the same revision again is answered as a
 * duplicate (null), so a caller that must know reads the key back (Ledger does).
 */
export async function casUpdate(
  kv: KV,
  key: string,
  data: Uint8Array,
  revision: number,
  opts: { timeout?: number } = {},
): Promise<number | null> {
  if (!Number.isInteger(revision) || revision <= 0) throw new RangeError(`revision must be a positive integer, not ${revision}`);
  const b = bucketOf(kv);
  const ek = b.encodeKey(key);
  try {
    const ack = await b.js.publish(b.subjectForKey(ek, true), data, {
      msgID: `${ek}@${revision}`,
      expect: { lastSubjectSequence: revision },
      ...(opts.timeout ? { timeout: opts.timeout } : {}),
    });
    return ack.duplicate ? null : ack.seq;
  } catch (err) {
    if (isCasConflict(err)) return null;
    throw err;
  }
}

/**
 * Writes the first value of `key`. Returns its revision, or null when the key holds a value. A
 * fresh key is exact as it is (expected sequence 0 is checked in log order); a key whose last entry
 * is a delete or purge marker is written by casUpdate on the marker's revision, never by the racy
 * fallback of `kv.create`.
 */
export async function casCreate(kv: KV, key: string, data: Uint8Array, opts: { timeout?: number } = {}): Promise<number | null> {
  const b = bucketOf(kv);
  try {
    const ack = await b.js.publish(b.subjectForKey(b.encodeKey(key), true), data, {
      expect: { lastSubjectSequence: 0 },
      ...(opts.timeout ? { timeout: opts.timeout } : {}),
    });
    return ack.seq;
  } catch (err) {
    if (!isCasConflict(err)) throw err;
  }
  const cur = await kv.get(key);
  if (cur && (cur.operation === 'DEL' || cur.operation === 'PURGE')) return casUpdate(kv, key, data, cur.revision, opts);
  return null;
}

/** casCreate when `revision` is 0, else casUpdate. */
export function casPut(kv: KV, key: string, data: Uint8Array, revision: number, opts: { timeout?: number } = {}): Promise<number | null> {
  return revision === 0 ? casCreate(kv, key, data, opts) : casUpdate(kv, key, data, revision, opts);
}

/**
 * Purges `key` (its history goes, a purge marker stays) only if it is still at `revision`; true if
 * purged, false when another writer got there first. The purge carries the message id an update of
 * that revision carries (`<key>@<revision>`), so of a purge and updates racing on one revision
 * exactly one goes through on R3 too — `kv.purge(key, { previousSeq })` alone has the blind spot of
 * the per-subject check (module comment): it could purge a write it never saw.
 */
export async function casPurge(kv: KV, key: string, revision: number, opts: { timeout?: number } = {}): Promise<boolean> {
  if (!Number.isInteger(revision) || revision <= 0) throw new RangeError(`revision must be a positive integer, not ${revision}`);
  const b = bucketOf(kv);
  const ek = b.encodeKey(key);
  const h = headers();
  h.set('KV-Operation', 'PURGE');
  h.set('Nats-Rollup', 'sub');
  try {
    const ack = await b.js.publish(b.subjectForKey(ek, true), Empty, {
      headers: h,
      msgID: `${ek}@${revision}`,
      expect: { lastSubjectSequence: revision },
      ...(opts.timeout ? { timeout: opts.timeout } : {}),
    });
    return !ack.duplicate;
  } catch (err) {
    if (isCasConflict(err)) return false;
    throw err;
  }
}
