/** A ledger entry as the bucket holds it: JSON, at most `taskBytes` long. */
import type { KvEntry } from '@nats-io/kv';
import { ShroomsError } from '@shrooms/protocol';
import type { LedgerEntry, Stored } from './entry.js';

const enc = new TextEncoder();

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

/** A task as stored, or null for a delete, an empty value or a key that holds no task. */
export function decode(e: KvEntry | null): Stored | null {
  if (!e || e.operation !== 'PUT' || e.value.length === 0) return null;
  // Only task entries: the bucket also holds health checks' writes under `_health.` keys.
  if (e.key.startsWith('_health.')) return null;
  const entry = e.json<LedgerEntry>();
  return entry && typeof entry === 'object' && entry.task ? { key: e.key, revision: e.revision, entry } : null;
}
