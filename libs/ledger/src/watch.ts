/** Following the ledger's keys as they change (Ledger.watch): decoded tasks, in order, and when the initial values are in. */
import { KvWatchInclude, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { Stored } from './entry.js';
import { decode } from './codec.js';
import type { OwnWrites } from './own-writes.js';

export interface WatchTasks {
  onEntry: (s: Stored, isUpdate: boolean) => void;
  onReady?: () => void;
  onEnd?: (err?: unknown) => void;
  /** No initial values, only the changes stored from now on (ready at once). */
  updatesOnly?: boolean;
  /** This process's own writes, skipped once known (see Ledger.watch). */
  own?: OwnWrites;
  /** One entry passed on (`false`) or skipped as this process's own (`true`). */
  counted: (skipped: boolean) => void;
}

export async function watchTasks(kv: KV, filter: string, w: WatchTasks): Promise<() => void> {
  let stopped = false;
  let ready = false;
  const markReady = () => {
    if (!ready) {
      ready = true;
      w.onReady?.();
    }
  };
  const iter = await kv.watch({ key: filter, ...(w.updatesOnly ? { include: KvWatchInclude.UpdatesOnly } : {}) });
  // Whether there are initial values at all (none: no entry will say the last was delivered).
  // The first key answers it: listing every key would make the start follow history.
  let any = false;
  if (!w.updatesOnly)
    for await (const _ of await kv.keys(filter)) {
      any = true;
      break;
    }
  if (!any) markReady();
  const own = w.own;
  void (async () => {
    const pass = (e: KvWatchEntry) => {
      const s = decode(e);
      if (s) {
        w.counted(false);
        w.onEntry(s, e.isUpdate);
      }
    };
    for await (const e of iter as AsyncIterable<KvWatchEntry>) {
      if (own && e.isUpdate && own.isOwn(e, () => stopped || pass(e))) w.counted(true);
      else pass(e);
      if (e.isUpdate || e.delta === 0) markReady();
    }
  })().then(
    () => stopped || w.onEnd?.(),
    (err: unknown) => stopped || w.onEnd?.(err),
  );
  return () => {
    stopped = true;
    iter.stop();
  };
}
