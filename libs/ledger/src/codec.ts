/** A ledger entry as the bucket holds it: JSON, at most `taskBytes` long. */
import { ShroomsError } from '@shrooms/protocol';
import { stamped, type LedgerEntry, type Stored } from './entry.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** What decode reads of a stored message: a KV entry, or a value read by a consumer (read-last.ts). */
export interface StoredMessage {
  key: string;
  revision: number;
  operation: string;
  value: Uint8Array;
  /** When the bucket stored it: the ledger's retention counts from here (a KV entry's own field). */
  created?: Date;
}

/** The entry's bytes; LIMIT_EXCEEDED `taskBytes` when they would be more than `taskBytes`. */
export function encode(entry: LedgerEntry, taskBytes: number): Uint8Array {
  const data = enc.encode(JSON.stringify(entry));
  if (data.length > taskBytes) {
    throw new ShroomsError('LIMIT_EXCEEDED', `task ${entry.task.id} would be ${data.length} bytes; the limit is ${taskBytes}`, {
      limit: 'taskBytes',
      max: taskBytes,
    });
  }
  return data;
}

/** An entry ready to write: as stored (`w` with this write's id last), its id and its bytes. */
export interface Encoded {
  entry: LedgerEntry;
  id: string;
  data: Uint8Array;
}

/** `entry` as one write over `base` (none: a create) stores it, with its write ids (`LedgerEntry.w`), and its bytes. */
export function encodeWrite(entry: LedgerEntry, base: LedgerEntry | undefined, taskBytes: number): Encoded {
  const s = stamped(entry, base);
  return { ...s, data: encode(s.entry, taskBytes) };
}

/** A task as stored, or null for a delete, an empty value or a key that holds no task. */
export function decode(e: StoredMessage | null): Stored | null {
  if (!e || e.operation !== 'PUT' || e.value.length === 0) return null;
  // Only task entries: the bucket also holds health checks' writes under `_health.` keys.
  if (e.key.startsWith('_health.')) return null;
  const entry = JSON.parse(dec.decode(e.value)) as LedgerEntry;
  return entry && typeof entry === 'object' && entry.task
    ? { key: e.key, revision: e.revision, entry, storedAt: e.created?.getTime() ?? 0 }
    : null;
}
