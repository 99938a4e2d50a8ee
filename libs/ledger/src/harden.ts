/**
 * The ledger and the signal field refuse rollups and purges at the stream (docs/security.md): a
 * single publish with `Nats-Rollup: all` on any key would otherwise leave one message in the
 * stream — every machine's tasks or signals gone — and a purge request would empty it. Neither
 * store ever needs them (history 1; deletes are markers, not rollups), so the streams are set
 * `allow_rollup_hdrs: false` and `deny_purge: true`, and nats-server refuses both to every user.
 * Applied by the services that create the buckets (only they may update a stream), once.
 *
 * A new bucket's stream is created hardened (createHardenedBucket), never hardened by a later
 * update: on nats-server 2.9 (Debian's, which the tests and `up` run) a cluster node that restarts
 * replays the stream's original creation against its hardened copy, fails with "stream
 * configuration update can not cancel deny purge" and crashes on every start — a node lost for
 * good after its first restart. hardenBucket remains for streams made before.
 */
import { DiscardPolicy, JetStreamApiCodes, jetstreamManager, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { hasJetStreamApiCode, isMadeMeanwhile, isPermissionViolation, retryJetStream } from '@shrooms/runtime';

/**
 * A JetStream manager, its API check (one account-info request) retried like the calls after it: a
 * cluster without a meta leader yet (nodes still starting) times that check out, which exited a
 * gateway that started first.
 */
const manager = (nc: NatsConnection) => retryJetStream(() => jetstreamManager(nc));

export interface HardenedBucketOptions {
  history: number;
  replicas: number;
  ttlMs?: number;
  maxValueSize?: number;
  /** Most messages (keys, with history 1) the stream keeps; with discard new, one more is refused. */
  maxMsgs?: number;
  description?: string;
}

/**
 * Creates the stream of KV bucket `bucket` when it does not exist, with the configuration the KV
 * client would give it (limits retention, discard new, direct get) plus no rollups and no purges.
 * The KV client then binds to it as to any existing bucket. Returns the stream's configuration as
 * found or made, or undefined when this user may not read it.
 */
export async function createHardenedBucket(
  nc: NatsConnection,
  bucket: string,
  opts: HardenedBucketOptions,
): Promise<StreamConfig | undefined> {
  const jsm = await manager(nc);
  const name = `KV_${bucket}`;
  try {
    return (await retryJetStream(() => jsm.streams.info(name))).config;
  } catch (err) {
    // Not ours to create (a user that may only read it), or there: the KV client decides as before.
    if (!isStreamNotFound(err)) return undefined;
  }
  try {
    const made = await retryJetStream(() =>
      jsm.streams.add({
        name,
        subjects: [`$KV.${bucket}.>`],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        discard: DiscardPolicy.New,
        max_msgs_per_subject: opts.history,
        max_msg_size: opts.maxValueSize ?? -1,
        max_msgs: opts.maxMsgs ?? -1,
        max_age: (opts.ttlMs ?? 0) * 1_000_000,
        ...(opts.ttlMs && opts.ttlMs * 1_000_000 < DUPLICATE_WINDOW_NS ? { duplicate_window: opts.ttlMs * 1_000_000 } : {}),
        num_replicas: opts.replicas,
        allow_direct: true,
        allow_rollup_hdrs: false,
        deny_purge: true,
        ...(opts.description ? { description: opts.description } : {}),
      }),
    );
    return made.config;
  } catch (err) {
    // Another replica created it meanwhile.
    if (isMadeMeanwhile(err)) return (await retryJetStream(() => jsm.streams.info(name))).config;
    // A user that may not create it (a bridge) started before its owner (the gateway): wait for
    // the owner to create it, as Ledger.bind waits for the ledger (about 30 s at most).
    if (isPermissionViolation(err)) {
      return (await retryJetStream(() => jsm.streams.info(name), { attempts: 40, maxDelayMs: 1_000, retryIf: isStreamNotFound })).config;
    }
    throw err;
  }
}

const isStreamNotFound = (err: unknown) => hasJetStreamApiCode(err, JetStreamApiCodes.StreamNotFound);

/** How a bucket's stream stands after hardenBucket. */
export type Hardening = 'hardened' | 'already' | 'not permitted' | 'left soft: replicated on nats-server 2.9';

export async function hardenBucket(nc: NatsConnection, bucket: string): Promise<Hardening> {
  const jsm = await manager(nc);
  const name = `KV_${bucket}`;
  try {
    const info = await retryJetStream(() => jsm.streams.info(name));
    if (!info.config.allow_rollup_hdrs && info.config.deny_purge) return 'already';
    // The update would cost a replicated stream's nodes their next restart on 2.9 (see above):
    // such a stream stays as it is, and the gateway says so at start (recreate it, or upgrade).
    if ((info.config.num_replicas ?? 1) > 1 && /^2\.9\./.test(nc.info?.version ?? '')) return 'left soft: replicated on nats-server 2.9';
    await retryJetStream(() => jsm.streams.update(name, { ...info.config, allow_rollup_hdrs: false, deny_purge: true }));
    return 'hardened';
  } catch (err) {
    // A user that may only read the stream (a bridge opening the signal field before the gateway
    // got to it): the gateway, which may, hardens it.
    if (isPermissionViolation(err)) return 'not permitted';
    throw err;
  }
}

/** JetStream's default duplicates window (2 min), which may not be longer than a stream's max age. */
const DUPLICATE_WINDOW_NS = 120_000_000_000;

/** The limits of a bucket's stream its owner sets: most messages (retainedTasks) and their age (ms). */
export interface BucketLimits {
  maxMsgs: number;
  maxAgeMs: number;
}

/**
 * Sets the most messages a bucket's stream keeps (the ledger's retainedTasks) and how long it keeps
 * each after its last write (finishedRetentionMs) on a stream made before, or with other limits.
 * A replicated stream on nats-server 2.9 is left as it is, for the same reason as hardenBucket: its
 * nodes replay the original configuration on restart. Returns the limits the stream has then
 * (undefined when this user may not read it), and whether they are the ones asked for.
 */
export async function limitBucket(
  nc: NatsConnection,
  bucket: string,
  want: BucketLimits,
): Promise<{ state: 'set' | 'already' | 'left'; has?: BucketLimits }> {
  const jsm = await manager(nc);
  const name = `KV_${bucket}`;
  try {
    const info = await retryJetStream(() => jsm.streams.info(name));
    const has = { maxMsgs: info.config.max_msgs, maxAgeMs: Math.round(info.config.max_age / 1_000_000) };
    if (has.maxMsgs === want.maxMsgs && has.maxAgeMs === want.maxAgeMs) return { state: 'already', has };
    if ((info.config.num_replicas ?? 1) > 1 && /^2\.9\./.test(nc.info?.version ?? '')) return { state: 'left', has };
    await retryJetStream(() =>
      jsm.streams.update(name, {
        ...info.config,
        max_msgs: want.maxMsgs,
        max_age: want.maxAgeMs * 1_000_000,
        // JetStream refuses a duplicates window longer than the max age.
        duplicate_window: Math.min(info.config.duplicate_window || DUPLICATE_WINDOW_NS, want.maxAgeMs * 1_000_000),
      }),
    );
    return { state: 'set', has: want };
  } catch (err) {
    if (isPermissionViolation(err)) return { state: 'left' };
    throw err;
  }
}
