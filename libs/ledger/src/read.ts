/**
 * Reading one key of the ledger's bucket. A direct get is answered by any replica, and one that lags
 * (a node back from a crash) can answer an older revision — or nothing, right after a create — than
 * its caller has seen; `readAtLeast` asks again until the answer has caught up, a bounded number of
 * times.
 */
import type { KV, KvEntry } from '@nats-io/kv';
import { retryJetStream } from '@shrooms/runtime';

/** Reads of a key whose answer is older than its caller has seen, before giving up (about 2.5 s). */
const LAGGING_READS = 8;

/**
 * Reads `key` until an answer is at `atLeast` or later (a delete marker counts); `behind` when none
 * was. A read JetStream does not answer is tried again (retryJetStream) unless `once`.
 */
export async function readAtLeast(
  kv: KV,
  key: string,
  atLeast: number,
  opts: { once?: boolean } = {},
): Promise<{ e: KvEntry | null; behind: boolean }> {
  const read = () => (opts.once ? kv.get(key) : retryJetStream(() => kv.get(key)));
  let delay = 25;
  for (let attempt = 1; ; attempt++) {
    const e = await read();
    if (atLeast <= 0 || (e && e.revision >= atLeast)) return { e, behind: false };
    if (attempt >= LAGGING_READS) return { e, behind: true };
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 800);
  }
}
