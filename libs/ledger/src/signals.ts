/**
 * The signal field (spec §3): presence and activity of sessions, kept apart from the ledger. A KV
 * bucket whose TTL makes a signal nobody renews disappear by itself; readers also drop entries
 * older than their own ttl, because servers before 2.11 do not tell watchers about expiry.
 * Never consulted for a task's state.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, SignalSchema, keys, subjects, type Signal } from '@shrooms/protocol';
import { retryJetStream } from '@shrooms/runtime';
import { createHardenedBucket, hardenBucket, type Hardening } from './harden.js';
import { keysNow } from './keys-now.js';

export const DEFAULT_SIGNAL_TTL_MS = 30_000;

export interface SignalView extends Signal {
  /** 1 when just renewed, falling to 0 as the signal reaches its ttl. */
  strength: number;
  ageMs: number;
}

export class SignalField {
  /** How `open` left the bucket's stream (rollups and purges refused or not). */
  hardening?: Hardening;

  private constructor(
    private readonly nc: NatsConnection,
    readonly kv: KV,
    readonly ttlMs: number,
  ) {}

  static async open(nc: NatsConnection, opts: { replicas?: number; ttlMs?: number } = {}): Promise<SignalField> {
    const ttlMs = opts.ttlMs ?? DEFAULT_SIGNAL_TTL_MS;
    const bucket = {
      history: 1,
      replicas: opts.replicas ?? 1,
      ttl: Math.max(ttlMs, 1000),
      description: 'shrooms signal field: presence and activity of sessions; entries fade',
    };
    await createHardenedBucket(nc, BUCKETS.signals, { ...bucket, ttlMs: bucket.ttl });
    const kv = await retryJetStream(() => new Kvm(nc).create(BUCKETS.signals, bucket));
    const field = new SignalField(nc, kv, ttlMs);
    field.hardening = await hardenBucket(nc, BUCKETS.signals);
    return field;
  }

  async renew(signal: Omit<Signal, 'at' | 'ttlMs'>): Promise<void> {
    const full: Signal = { ...signal, at: new Date().toISOString(), ttlMs: this.ttlMs };
    const data = JSON.stringify(full);
    await this.kv.put(keys.signal(signal.machine, signal.session), data);
    this.nc.publish(subjects.signal(signal.machine, signal.session), data);
  }

  /** A bridge that stops cleanly removes its signal at once instead of letting it fade. */
  async withdraw(machine: string, session: string): Promise<void> {
    await this.kv.delete(keys.signal(machine, session));
  }

  async get(machine: string, session: string, now = Date.now()): Promise<SignalView | null> {
    const e = await this.kv.get(keys.signal(machine, session));
    if (!e || e.operation !== 'PUT' || e.value.length === 0) return null;
    return view(e.json<unknown>(), now);
  }

  /** Every live signal, optionally of one machine. */
  async list(machine?: string, now = Date.now()): Promise<SignalView[]> {
    const out: SignalView[] = [];
    const filter = machine ? keys.tasksOfMachine(machine) : '>';
    // The keys as they stand now: kv.keys() follows renewals and may not end under them.
    for (const k of await keysNow(this.nc, BUCKETS.signals, filter)) {
      const e = await this.kv.get(k);
      if (!e || e.operation !== 'PUT' || e.value.length === 0) continue;
      const v = view(e.json<unknown>(), now);
      if (v) out.push(v);
    }
    return out.sort((a, b) => `${a.machine}/${a.session}`.localeCompare(`${b.machine}/${b.session}`));
  }
}

function view(raw: unknown, now: number): SignalView | null {
  const parsed = SignalSchema.safeParse(raw);
  if (!parsed.success) return null;
  const ageMs = Math.max(0, now - Date.parse(parsed.data.at));
  if (ageMs >= parsed.data.ttlMs) return null;
  return { ...parsed.data, ageMs, strength: Math.round((1 - ageMs / parsed.data.ttlMs) * 100) / 100 };
}
