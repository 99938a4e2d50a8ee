/** An in-memory ScheduleStorePort with the bucket's compare-and-set semantics, for unit tests. */
import type { ScheduleStorePort, StoredSchedule } from '../store.js';
import type { Schedule } from '@shrooms/protocol';

export class MemoryStore implements ScheduleStorePort {
  private rows = new Map<string, { json: string; revision: number }>();
  private seq = 0;
  private listeners = new Set<(key: string, s: StoredSchedule | null) => void>();
  /** The machines said to run a scheduler, as a scan lists them. */
  schedulers: string[] = [];
  /** The next this many calls fail (NATS away for a moment). */
  failCalls = 0;

  private check(): void {
    if (this.failCalls > 0) {
      this.failCalls--;
      throw new Error('TIMEOUT: nats is away');
    }
  }

  private row(id: string): StoredSchedule | null {
    const r = this.rows.get(id);
    return r ? { schedule: JSON.parse(r.json) as Schedule, revision: r.revision } : null;
  }

  private write(s: Schedule): StoredSchedule {
    const revision = ++this.seq;
    this.rows.set(s.id, { json: JSON.stringify(s), revision });
    const stored = this.row(s.id)!;
    for (const l of this.listeners) l(s.id, stored);
    return stored;
  }

  async get(id: string) {
    this.check();
    return this.row(id);
  }

  async create(s: Schedule) {
    this.check();
    return this.rows.has(s.id) ? null : this.write(s);
  }

  async replace(s: Schedule, revision: number) {
    this.check();
    return this.rows.get(s.id)?.revision === revision ? this.write(s) : null;
  }

  async update(id: string, change: (cur: Schedule) => Schedule | null) {
    for (;;) {
      const cur = await this.get(id);
      if (!cur) return null;
      const next = change(cur.schedule);
      if (!next) return cur;
      const done = await this.replace(next, cur.revision);
      if (done) return done;
    }
  }

  async all() {
    this.check();
    return [...this.rows.keys()].map((id) => this.row(id)!);
  }

  /** `all`, and `schedulers`; nothing here leaves markers. */
  async scan() {
    return { schedules: await this.all(), markers: [], schedulers: [...this.schedulers] };
  }

  async remove(id: string, revision: number) {
    this.check();
    if (this.rows.get(id)?.revision === revision) {
      this.rows.delete(id);
      for (const l of this.listeners) l(id, null);
    }
  }

  async watch(onEntry: (key: string, s: StoredSchedule | null) => void) {
    for (const id of this.rows.keys()) onEntry(id, this.row(id));
    this.listeners.add(onEntry);
    return () => void this.listeners.delete(onEntry);
  }
}
