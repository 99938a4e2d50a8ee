/**
 * The ledger's bucket as `Ledger.open` finds or makes it. Only its owner (the gateway) changes the
 * configuration of a bucket that exists — its retained-task limit, its retention (the stream's max
 * age: a task is kept that long after its last write, open or not) and its hardening; anyone else
 * (the bench's preload, tools, tests) takes it as it is. Either way the limits it has come back,
 * which is what follows the ledger (the gateway's listing index, the dashboard) must go by.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, type Limits } from '@shrooms/protocol';
import { retryJetStream } from '@shrooms/runtime';
import { createHardenedBucket, hardenBucket, limitBucket, type Hardening } from './harden.js';

export interface TaskBucket {
  kv: KV;
  /** How an owner left the stream (rollups and purges refused or not); unset for anyone else. */
  hardening?: Hardening;
  /** Its most tasks, when known. */
  retained?: number;
  /** How long it keeps a task after its last write, ms (Infinity: no max age; the setting when the stream could not be read). */
  retentionMs: number;
  /** An owner could not set its limits (replicated on nats-server 2.9, or not permitted). */
  limitsLeft: boolean;
}

export async function openTaskBucket(nc: NatsConnection, limits: Limits, o: { replicas?: number; owner?: boolean }): Promise<TaskBucket> {
  const bucket = {
    history: 1,
    replicas: o.replicas ?? 1,
    ttl: limits.finishedRetentionMs,
    maxValueSize: limits.taskBytes + 64 * 1024,
    description: 'shrooms task ledger: one value per task, the task as it stands',
  };
  const found = await createHardenedBucket(nc, BUCKETS.tasks, { ...bucket, ttlMs: bucket.ttl, maxMsgs: limits.retainedTasks });
  const kv = await retryJetStream(() => new Kvm(nc).create(BUCKETS.tasks, bucket));
  if (!o.owner)
    return {
      kv,
      retained: found && found.max_msgs > 0 ? found.max_msgs : undefined,
      retentionMs: found ? retentionOf(found.max_age / 1_000_000) : limits.finishedRetentionMs,
      limitsLeft: false,
    };
  const hardening = await hardenBucket(nc, BUCKETS.tasks);
  const limited = await limitBucket(nc, BUCKETS.tasks, { maxMsgs: limits.retainedTasks, maxAgeMs: limits.finishedRetentionMs });
  return {
    kv,
    hardening,
    retained: limited.has?.maxMsgs,
    retentionMs: limited.has ? retentionOf(limited.has.maxAgeMs) : limits.finishedRetentionMs,
    limitsLeft: limited.state === 'left',
  };
}

/**
 * The bucket's retention as it stands: gateways on several machines each make their own setting the
 * bucket's at start, the last one started winning, so what follows the ledger reads it again.
 */
export async function readRetention(nc: NatsConnection): Promise<number> {
  // Without the manager's API check (an account-info request): the gateway's minute sweep asks this.
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  return retentionOf((await jsm.streams.info(`KV_${BUCKETS.tasks}`)).config.max_age / 1_000_000);
}

/** A stream's max age (ms) as a retention: 0 is no limit — kept forever, so nothing that follows it lets a task go. */
const retentionOf = (maxAgeMs: number): number => (maxAgeMs > 0 ? Math.round(maxAgeMs) : Infinity);
