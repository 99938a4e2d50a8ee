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
}
