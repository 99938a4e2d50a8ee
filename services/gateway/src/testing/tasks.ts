/** Tasks for the gateway's unit tests, as a bridge would write them. */
import { transitions, type LedgerEntry } from '@shrooms/ledger';
import type { Metadata } from '@shrooms/protocol';

/** Task `SESSION:ID` asked with "hello" at `now`, from `device` (no device when undefined), not yet started. */
export function askedTask(session: string, id: string, o: { device?: string; now?: Date; metadata?: Metadata } = {}): LedgerEntry {
  return transitions.newTask({
    id: `${session}:${id}`,
    contextId: `ctx-${id}`,
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text: 'hello' }] },
    metadata: { ...(o.device ? { 'shrooms/device': o.device } : {}), ...o.metadata },
    queued: false,
    now: o.now ?? new Date(),
  });
}
