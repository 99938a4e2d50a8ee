/**
 * The keys of a KV bucket as they stand now. `kv.keys()` follows the bucket: a key written while
 * the listing runs comes again, and when writes come faster than the listing reads (a signal renewed
 * every 200 ms on a busy machine), it does not end. One stream-info request with a subjects filter
 * (the client pages it) is a snapshot: it always ends. Deleted keys are listed too (their marker is
 * the last message); callers read each key anyway. The manager skips its JetStream API check (one
 * request more per listing): the stream-info request fails as clearly when JetStream is not there.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { retryJetStream } from './retry.js';

export async function keysNow(nc: NatsConnection, bucket: string, filter = '>'): Promise<string[]> {
  const prefix = `$KV.${bucket}.`;
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const info = await retryJetStream(() => jsm.streams.info(`KV_${bucket}`, { subjects_filter: `${prefix}${filter}` }));
  return Object.keys(info.state.subjects ?? {}).map((s) => s.slice(prefix.length));
}
