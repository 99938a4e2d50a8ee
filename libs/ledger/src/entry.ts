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
}

/** A ledger entry together with its KV revision (the stream sequence), for compare-and-set. */
export interface Stored {
  key: string;
  revision: number;
  entry: LedgerEntry;
}
