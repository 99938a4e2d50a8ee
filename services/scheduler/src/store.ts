/**
 * Schedules, durable in the JetStream KV bucket `shrooms_schedules` (file storage; replicas from
 * config): one value per schedule, the schedule as it stands. Every change is a compare-and-set on
 * the key's revision (casPut of @shrooms/runtime, exact on an R3 bucket too), so two replicas can
 * never both claim or move one schedule on, and a cancel is never overwritten by a replica that was
 * firing at the same moment.
 */
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, ShroomsError, keys, kvSubject, machineOfSchedulerKey, ScheduleSchema, type Schedule } from '@shrooms/protocol';
import { casCreate, casPurge, casUpdate, keysNow, retryJetStream } from '@shrooms/runtime';

export interface StoredSchedule {
  schedule: Schedule;
  revision: number;
}

/** What the engine and the service need from the store (tests supply an in-memory one). */
export interface ScheduleStorePort {
  get(id: string): Promise<StoredSchedule | null>;
  create(s: Schedule): Promise<StoredSchedule | null>;
  replace(s: Schedule, revision: number): Promise<StoredSchedule | null>;
  update(id: string, change: (cur: Schedule) => Schedule | null, attempts?: number): Promise<StoredSchedule | null>;
  all(): Promise<StoredSchedule[]>;
  /** A full read of the bucket: `all`, with what removals left and the machines said to run a scheduler. */
  scan(): Promise<Scan>;
  /** Takes removal markers out of the bucket's stream (store `dropMarkers`). */
  dropMarkers?(markers: Marker[]): Promise<void>;
  remove(id: string, revision: number): Promise<void>;
  watch(onEntry: (key: string, s: StoredSchedule | null) => void, onEnd: () => void): Promise<() => void>;
}

/** What one full read of the bucket found. */
export interface Scan {
  schedules: StoredSchedule[];
  /** The keys holding only what a removal left (its marker). */
  markers: Marker[];
  /** The machines said to run a scheduler (`announce`). */
  schedulers: string[];
}

/** What a removal (`remove`, an operator's `nats kv del`) left of a key: its marker, at `revision`. */
export interface Marker {
  key: string;
  revision: number;
}

const enc = new TextEncoder();

/** Most reads of one full read of the bucket (`all`) in flight at once. */
const READ_BATCH = 64;

export class ScheduleStore implements ScheduleStorePort {
  private constructor(
    readonly kv: KV,
    private readonly nc: NatsConnection,
  ) {}

  /**
   * Creates the bucket if needed (idempotent) and binds to it; retried while JetStream is slow to
   * answer (a cluster still electing its leaders), as a create that happened opens the bucket.
   *
   * No `max_msgs` (unlike the ledger's): each removed schedule leaves its purge marker in the
   * stream until a rescan takes it out (`dropMarkers`), so a cap with discard new could fill up with
   * markers between two rescans and refuse every write. The engine bounds the schedules instead
   * (LIMIT_SCHEDULES, LIMIT_FINISHED_SCHEDULES).
   */
  static async open(nc: NatsConnection, opts: { replicas?: number } = {}): Promise<ScheduleStore> {
    const kv = await retryJetStream(() =>
      new Kvm(nc).create(BUCKETS.schedules, {
        history: 5,
        replicas: opts.replicas ?? 1,
        storage: 'file',
        maxValueSize: 512 * 1024,
        description: 'shrooms schedules: one value per schedule, the schedule as it stands',
      }),
    );
    return new ScheduleStore(kv, nc);
  }

  async get(id: string): Promise<StoredSchedule | null> {
    return decode(await this.kv.get(keys.schedule(id)));
  }

  /** Writes a new schedule; null when the id is taken. */
  async create(s: Schedule): Promise<StoredSchedule | null> {
    const revision = await casCreate(this.kv, keys.schedule(s.id), enc.encode(JSON.stringify(s)));
    return revision === null ? null : { schedule: s, revision };
  }

  /** Compare-and-set against `revision`; null when someone else changed the schedule first. */
  async replace(s: Schedule, revision: number): Promise<StoredSchedule | null> {
    const rev = await casUpdate(this.kv, keys.schedule(s.id), enc.encode(JSON.stringify(s)), revision);
    return rev === null ? null : { schedule: s, revision: rev };
  }

  /**
   * Applies `change` to the current schedule with compare-and-set, retrying on a concurrent write.
   * `change` returns the next schedule, or null to leave it as it is. Null when there is no such
   * schedule.
   */
  async update(id: string, change: (cur: Schedule) => Schedule | null, attempts = 20): Promise<StoredSchedule | null> {
    for (let i = 0; i < attempts; i++) {
      const cur = await this.get(id);
      if (!cur) return null;
      const next = change(cur.schedule);
      if (!next) return cur;
      const done = await this.replace(next, cur.revision);
      if (done) return done;
    }
    throw new ShroomsError('INTERNAL', `schedule ${id} changed too often to update; retry`);
  }

  /**
   * Every schedule (a full read of the bucket). Its keys come from one stream-info request, not
   * `kv.keys()`: that makes a consumer on the server for each listing, left there for five minutes
   * after, and the engine lists every SCHEDULER_RESCAN_MS (about twenty at a time per replica).
   * The values are read READ_BATCH at a time: there may be tens of thousands of keys (the
   * schedules, and a marker of each one removed), and one request each at once flooded NATS.
   */
  async all(): Promise<StoredSchedule[]> {
    return (await this.scan()).schedules;
  }

  async scan(): Promise<Scan> {
    const ids = await keysNow(this.nc, BUCKETS.schedules);
    const found: Scan = { schedules: [], markers: [], schedulers: [] };
    for (let i = 0; i < ids.length; i += READ_BATCH) {
      const batch = await Promise.all(ids.slice(i, i + READ_BATCH).map((k) => this.kv.get(k)));
      for (const e of batch) {
        const s = decode(e);
        if (s) found.schedules.push(s);
        else if (e && (e.operation === 'PURGE' || e.operation === 'DEL')) found.markers.push({ key: e.key, revision: e.revision });
        else if (e && e.value.length > 0) {
          const machine = machineOfSchedulerKey(e.key);
          if (machine !== undefined) found.schedulers.push(machine);
        }
      }
    }
    return found;
  }

  /**
   * Takes removal markers out of the stream: each key's messages up to its marker's revision, so a
   * schedule written under the same id after it stays. A removed schedule's marker would otherwise
   * stay for good, and every rescan would read it again. Needs the stream-purge permission of the
   * scheduler's NATS user (deploy/nats).
   */
  async dropMarkers(markers: Marker[]): Promise<void> {
    const stream = `KV_${BUCKETS.schedules}`;
    for (const m of markers) {
      const reply = await this.nc.request(
        `$JS.API.STREAM.PURGE.${stream}`,
        JSON.stringify({ filter: kvSubject(BUCKETS.schedules, m.key), seq: m.revision + 1 }),
        { timeout: 5_000 },
      );
      const error = reply.json<{ error?: { description?: string } }>().error;
      if (error) throw new Error(`could not take the marker of ${m.key} out of ${stream}: ${error.description ?? 'refused'}`);
    }
  }

  /**
   * Says that `machine` runs a scheduler (key `_schedulers.MACHINE`; the engine says it when a scan
   * did not find it): a gateway takes a schedule's occurrences and results only from a machine named
   * so (gateway tasks/scheduled.ts). Only the scheduler's NATS user may write the bucket.
   */
  async announce(machine: string, replica: string): Promise<void> {
    await this.kv.put(keys.schedulerMachine(machine), enc.encode(JSON.stringify({ machine, replica, since: new Date().toISOString() })));
  }

  /** Purges a schedule only if it is still at `revision` (compare-and-set, like every change). */
  async remove(id: string, revision: number): Promise<void> {
    await casPurge(this.kv, keys.schedule(id), revision);
  }

  /**
   * Follows every change (the current value of each key first). Returns a stop function; `onEnd`
   * runs if the watch ends by itself (the caller restarts it).
   */
  async watch(onEntry: (id: string, s: StoredSchedule | null) => void, onEnd: () => void): Promise<() => void> {
    const iter = await this.kv.watch();
    let stopped = false;
    void (async function follow() {
      try {
        for await (const e of iter) onEntry(e.key, decode(e));
      } catch {
        // ended with an error: the caller restarts the watch
      }
      if (!stopped) onEnd();
    })();
    return () => {
      stopped = true;
      iter.stop();
    };
  }
}

/** A schedule as stored; null for a removed key or a value that is none (the health check's, an operator's). */
function decode(e: KvEntry | null): StoredSchedule | null {
  if (!e || e.operation !== 'PUT' || e.value.length === 0) return null;
  let value: unknown;
  try {
    value = e.json<unknown>();
  } catch {
    return null;
  }
  const parsed = ScheduleSchema.safeParse(value);
  return parsed.success ? { schedule: parsed.data, revision: e.revision } : null;
}
