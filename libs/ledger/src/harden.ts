/**
 * The ledger and the signal field refuse rollups and purges at the stream (docs/security.md): a
 * single publish with `Nats-Rollup: all` on any key would otherwise leave one message in the
 * stream — every machine's tasks or signals gone — and a purge request would empty it. Neither
 * store ever needs them (history 1; deletes are markers, not rollups), so the streams are set
 * `allow_rollup_hdrs: false` and `deny_purge: true`, and nats-server refuses both to every user.
 * Applied by the services that create the buckets (only they may update a stream), once.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { retryJetStream } from '@shrooms/runtime';

export async function hardenBucket(nc: NatsConnection, bucket: string): Promise<'hardened' | 'already' | 'not permitted'> {
  const jsm = await jetstreamManager(nc);
  const name = `KV_${bucket}`;
  try {
    const info = await retryJetStream(() => jsm.streams.info(name));
    if (!info.config.allow_rollup_hdrs && info.config.deny_purge) return 'already';
    await retryJetStream(() => jsm.streams.update(name, { ...info.config, allow_rollup_hdrs: false, deny_purge: true }));
    return 'hardened';
  } catch (err) {
    // A user that may only read the stream (a bridge opening the signal field before the gateway
    // got to it): the gateway, which may, hardens it.
    if (err instanceof Error && (err.name === 'PermissionViolationError' || /permissions violation/i.test(err.message)))
      return 'not permitted';
    throw err;
  }
}
