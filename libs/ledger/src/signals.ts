/**
 * The signal field (spec §3): presence and activity of sessions, kept apart from the ledger. A KV
 * bucket whose TTL makes a signal nobody renews disappear by itself; readers also drop entries
 * older than their own ttl, because servers before 2.11 do not tell watchers about expiry.
 * Never consulted for a task's state.
 */
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import {
  BUCKETS,
  DEFAULT_SIGNAL_TTL_MS,
  SignalSchema,
  decodeToken,
  keys,
  signalFreshness,
  subjects,
  withFields,
  type Signal,
} from '@shrooms/protocol';
import { casPut, keysNow, retryJetStream } from '@shrooms/runtime';
import { createHardenedBucket, hardenBucket, type Hardening } from './harden.js';

export interface SignalView extends Signal {
  /** 1 when just renewed, falling to 0 as the signal reaches its ttl. */
  strength: number;
  ageMs: number;
}

export class SignalField {
  /** How `open` left the bucket's stream (rollups and purges refused or not). */
  hardening?: Hardening;
  /** Signals read from the bucket by `get` (tests show a followed signal costs none). */
  reads = 0;
  /**
   * Per followed machine, the last signal the watch brought of each session, checked once as it
   * arrived (null: a value that is no signal); `get` only works out how faded it is.
   */
  private followed = new Map<string, Map<string, Signal | null>>();

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
    const data = this.encode(signal);
    await this.kv.put(keys.signal(signal.machine, signal.session), data);
    this.nc.publish(subjects.signal(signal.machine, signal.session), data);
  }

  /**
   * Writes a session's signal only if its key is still at `revision` (as `read` found it): a
   * bridge's first signal, so that of two bridges starting for one session at once exactly one goes
   * on (session-bridge single.ts). False when another wrote first: read again and decide again.
   */
  async claim(signal: Omit<Signal, 'at' | 'ttlMs'>, revision: number): Promise<boolean> {
    const data = this.encode(signal);
    const stored = await casPut(this.kv, keys.signal(signal.machine, signal.session), new TextEncoder().encode(data), revision);
    if (stored === null) return false;
    this.nc.publish(subjects.signal(signal.machine, signal.session), data);
    return true;
  }

  private encode(signal: Omit<Signal, 'at' | 'ttlMs'>): string {
    const full: Signal = { ...signal, at: new Date().toISOString(), ttlMs: this.ttlMs };
    return JSON.stringify(full);
  }

  /** A bridge that stops cleanly removes its signal at once instead of letting it fade. */
  async withdraw(machine: string, session: string): Promise<void> {
    await this.kv.delete(keys.signal(machine, session));
  }

  /**
   * A signal: from memory when `follow` brought it and it has not faded, else read from the bucket.
   * Only a live signal is taken from memory: a miss or a faded one is always read, so a session
   * whose bridge just started is never taken for absent because the watch has not caught up.
   */
  async get(machine: string, session: string, now = Date.now()): Promise<SignalView | null> {
    const known = this.followed.get(machine)?.get(session);
    const live = known ? fresh(known, now) : null;
    if (live) return live;
    return (await this.read(machine, session, now)).signal;
  }

  /**
   * A session's signal as the bucket holds it now, never from memory, with the revision `claim`
   * must find (0: the key never held one, or its entry aged out). `signal` is null when there is
   * none, or it was withdrawn, or it has faded.
   */
  async read(machine: string, session: string, now = Date.now()): Promise<{ signal: SignalView | null; revision: number }> {
    this.reads++;
    const e = await this.kv.get(keys.signal(machine, session));
    if (!e) return { signal: null, revision: 0 };
    return { signal: e.operation === 'PUT' && e.value.length > 0 ? view(e.json<unknown>(), now) : null, revision: e.revision };
  }

  /**
   * Follows the signals of `machine` with one KV watch, so that `get` of a live one costs no round
   * trip (the gateway looks its session up on every send). A watch that ends by itself is started
   * again after `restartMs`; meanwhile `get` reads. Returns the stop.
   */
  async follow(machine: string, opts: { restartMs?: number; onEnd?: (err?: unknown) => void } = {}): Promise<() => void> {
    let stopped = false;
    let stopWatch = () => {};
    const start = async (): Promise<void> => {
      const signals = new Map<string, Signal | null>();
      const iter = await this.kv.watch({ key: keys.tasksOfMachine(machine) });
      this.followed.set(machine, signals);
      stopWatch = () => iter.stop();
      const ended = (err?: unknown) => {
        if (this.followed.get(machine) === signals) this.followed.delete(machine);
        if (stopped) return;
        opts.onEnd?.(err);
        setTimeout(() => void (stopped ? undefined : start().catch((e: unknown) => ended(e))), opts.restartMs ?? 1_000).unref();
      };
      void (async () => {
        for await (const e of iter as AsyncIterable<KvWatchEntry>) {
          const session = decodeToken(e.key.slice(e.key.indexOf('.') + 1));
          if (e.operation === 'PUT' && e.value.length > 0) signals.set(session, parseSignal(e.json<unknown>()));
          else signals.delete(session);
        }
      })().then(() => ended(), ended);
    };
    await start();
    return () => {
      stopped = true;
      this.followed.delete(machine);
      stopWatch();
    };
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
  const signal = parseSignal(raw);
  return signal ? fresh(signal, now) : null;
}

function parseSignal(raw: unknown): Signal | null {
  const parsed = SignalSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** The signal as seen at `now`, or null once it has faded. */
function fresh(signal: Signal, now: number): SignalView | null {
  const f = signalFreshness(signal, now);
  return f ? withFields(signal, f) : null;
}
