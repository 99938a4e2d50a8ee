/**
 * Everything the dashboard shows, kept live while someone looks: the ledger's tasks (one KV watch
 * over the whole ledger, so chains that cross machines show whole), the signal field's agents, the
 * guard's refusals and the bridges' owner notes. Started by the first request, stopped after
 * `idleMs` with no page open, so a gateway nobody watches pays nothing for it.
 *
 * Changes reach browsers in batches every `flushMs`: a burst of task changes becomes one event, and
 * a burst larger than `batchMax` becomes a `resync` (the page reloads what it shows).
 *
 * Over 300 lines because the four watches share one lifecycle (start on first look, stop when idle)
 * and one snapshot; the index itself is apart in board.ts.
 */
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { RefusalEventSchema, SignalSchema, decodeToken, signalFreshness, subjects, type Signal } from '@shrooms/protocol';
import type { Ledger, SignalField, Stored } from '@shrooms/ledger';
import type { Logger } from '@shrooms/runtime';
import type { z } from 'zod';
import { Board } from './board.js';
import { clip, keyOfName, toRow, type TaskRow } from './rows.js';
import type { DashboardStreams } from './streams.js';
import type { AgentView } from './wire.js';

export interface FeedOptions {
  /** Batch window for changes sent to browsers, ms. Default 250. */
  flushMs?: number;
  /** Larger bursts become one `resync`. Default 300 rows. */
  batchMax?: number;
  /** How often the signal field is read again (fades and withdrawals), ms. Default 3 000. */
  agentsPollMs?: number;
  /** Stop following after this long with no page open and no request, ms. Default 10 min. */
  idleMs?: number;
  /** Guard refusals and owner notes kept for the page. Default 100 each. */
  keep?: number;
}

export interface FeedDeps {
  nc: NatsConnection;
  ledger: Ledger;
  signals: SignalField;
  log: Logger;
  machine: string;
  streams: DashboardStreams;
}

/** An agent as the page reads it (wire.ts), with the signal's own state and time. */
export interface AgentRow extends AgentView {
  state: Signal['state'];
  at: string;
  /** 1 when just renewed, falling to 0 at its ttl. */
  strength: number;
}

const RefusalSchema = RefusalEventSchema.partial({ details: true }).loose();
export type Refusal = z.infer<typeof RefusalSchema>;

export interface Note {
  kind: string;
  agent: string;
  taskId?: string;
  at: string;
  nudge?: number;
}

export class DashboardFeed {
  readonly board = new Board();
  private agentsByName = new Map<string, Signal>();
  private refusals: Refusal[] = [];
  private notes: Note[] = [];
  private pending = new Map<string, TaskRow>();
  private overflow = false;
  private agentsDirty = false;
  private running?: Promise<void>;
  private stops: (() => void)[] = [];
  private lastUsed = Date.now();
  private following = false;
  /** Bumped by every stop, so a start still on its way cannot leave a watch behind. */
  private generation = 0;
  private closed = false;
  private readonly o: Required<FeedOptions>;

  constructor(
    readonly d: FeedDeps,
    opts: FeedOptions = {},
  ) {
    this.o = { flushMs: 250, batchMax: 300, agentsPollMs: 3_000, idleMs: 600_000, keep: 100, ...opts };
  }

  get active(): boolean {
    return this.running !== undefined;
  }

  /** Starts following (once) and resolves when the ledger's tasks are all in the board. */
  use(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the dashboard is closed'));
    this.touch();
    const generation = this.generation;
    this.running ??= this.start(generation).catch((err: unknown) => {
      if (generation === this.generation) this.stop();
      throw err;
    });
    return this.running;
  }

  /** Marks the feed as in use (a page was open just now) without starting it. */
  touch(): void {
    this.lastUsed = Date.now();
  }

  private async start(generation: number): Promise<void> {
    const { d } = this;
    this.following = true;
    const subscribe = (subject: string, fn: (data: unknown, subject: string) => void): void => {
      const sub: Subscription = d.nc.subscribe(subject);
      this.stops.push(() => sub.unsubscribe());
      void (async () => {
        for await (const m of sub) {
          try {
            fn(m.json<unknown>(), m.subject);
          } catch {
            /* not JSON: nothing to show */
          }
        }
      })();
    };
    subscribe(subjects.refusalsAll(), (data) => this.onRefusal(data));
    subscribe(subjects.notifyAll(), (data, subject) => this.onNote(data, subject));
    subscribe(subjects.signalsAll(), (data) => this.onSignal(data));
    const timers = [
      setInterval(() => this.flush(), this.o.flushMs),
      setInterval(() => void this.pollAgents(), this.o.agentsPollMs),
      setInterval(() => this.board.prune(Date.now() - d.ledger.retentionMs), 60_000),
      setInterval(() => this.stopWhenIdle(), Math.min(60_000, this.o.idleMs)),
    ];
    for (const t of timers) t.unref();
    this.stops.push(() => timers.forEach(clearInterval));

    let ready!: () => void;
    const loaded = new Promise<void>((r) => (ready = r));
    let initial = true;
    const stopWatch = await d.ledger.watch(
      '>',
      (s) => generation === this.generation && this.onTask(s, initial),
      () => {
        initial = false;
        ready();
      },
    );
    if (generation !== this.generation) {
      stopWatch(); // stopped while the watch was being set up
      return;
    }
    this.stops.push(stopWatch);
    await Promise.all([loaded, this.pollAgents()]);
    d.log.info({ tasks: this.board.size, agents: this.agentsByName.size }, 'dashboard following the ledger');
  }

  /** For good (the gateway is closing): stops following and refuses to start again. */
  close(): void {
    this.closed = true;
    this.stop();
  }

  stop(): void {
    this.generation++;
    for (const s of this.stops.splice(0)) s();
    this.following = false;
    this.running = undefined;
    this.board.clear();
    this.agentsByName.clear();
    this.pending.clear();
    this.d.streams.closeAll();
  }

  private stopWhenIdle(): void {
    if (this.d.streams.size === 0 && Date.now() - this.lastUsed > this.o.idleMs) {
      this.d.log.info('no dashboard open; stopped following');
      this.stop();
    }
  }

  private onTask(s: Stored, initial: boolean): void {
    const row = toRow(s);
    if (!row || !this.board.upsert(row) || initial) return;
    if (this.pending.size >= this.o.batchMax) this.overflow = true;
    else this.pending.set(row.key, row);
  }

  private onSignal(data: unknown): void {
    const p = SignalSchema.safeParse(data);
    if (!p.success) return;
    this.agentsByName.set(`${p.data.machine}/${p.data.session}`, p.data);
    this.agentsDirty = true;
  }

  private onRefusal(data: unknown): void {
    const p = RefusalSchema.safeParse(data);
    if (!p.success) return;
    const r = p.data;
    const refusal: Refusal = {
      at: clip(r.at, 40),
      machine: clip(r.machine, 80),
      session: clip(r.session, 80),
      taskId: clip(r.taskId, 300),
      device: clip(r.device, 130),
      ...(r.from ? { from: clip(r.from, 130) } : {}),
      key: clip(r.key, 60),
      code: r.code,
      message: clip(r.message, 500),
    };
    this.refusals.unshift(refusal);
    this.refusals.length = Math.min(this.refusals.length, this.o.keep);
    this.d.streams.broadcast('refusal', refusal);
  }

  private onNote(data: unknown, subject: string): void {
    // shrooms.notify.M.S.KIND
    const t = subject.split('.');
    if (t.length !== 5) return;
    let agent: string;
    try {
      agent = `${decodeToken(t[2]!)}/${decodeToken(t[3]!)}`;
    } catch {
      return;
    }
    const body = (data ?? {}) as Record<string, unknown>;
    const note: Note = {
      kind: clip(t[4]!, 20),
      agent,
      ...(typeof body.taskId === 'string' ? { taskId: clip(body.taskId, 300) } : {}),
      at: typeof body.at === 'string' ? clip(body.at, 40) : new Date().toISOString(),
      ...(typeof body.nudge === 'number' ? { nudge: body.nudge } : {}),
    };
    this.notes.unshift(note);
    this.notes.length = Math.min(this.notes.length, this.o.keep);
    this.d.streams.broadcast('note', note);
  }

  private async pollAgents(): Promise<void> {
    try {
      const list = await this.d.signals.list();
      const next = new Map(list.map((s) => [`${s.machine}/${s.session}`, s as Signal]));
      const before = [...this.agentsByName.entries()]
        .map(([k, s]) => `${k}@${s.at}`)
        .sort()
        .join('\n');
      const after = [...next.entries()]
        .map(([k, s]) => `${k}@${s.at}`)
        .sort()
        .join('\n');
      // A pulse newer than what the field returned wins (the KV read may lag a publish).
      for (const [k, s] of this.agentsByName) {
        const n = next.get(k);
        if (n && Date.parse(n.at) < Date.parse(s.at)) next.set(k, s);
      }
      this.agentsByName = next;
      if (before !== after) this.agentsDirty = true;
    } catch (err) {
      if (this.following) this.d.log.warn({ err }, 'dashboard could not read the signal field');
    }
  }

  private flush(): void {
    if (this.overflow) {
      this.overflow = false;
      this.pending.clear();
      this.d.streams.broadcast('resync', { counts: this.board.counts() });
    } else if (this.pending.size > 0) {
      const rows = [...this.pending.values()];
      this.pending.clear();
      this.d.streams.broadcast('tasks', { rows, counts: this.board.counts() });
    }
    if (this.agentsDirty) {
      this.agentsDirty = false;
      this.d.streams.broadcast('agents', { agents: this.agents() });
    }
  }

  agents(now = Date.now()): AgentRow[] {
    const out: AgentRow[] = [];
    for (const [agent, s] of this.agentsByName) {
      const fresh = signalFreshness(s, now);
      if (!fresh) continue;
      const local = s.machine === this.d.machine;
      const url = !local ? dashboardUrl(s.gatewayUrl) : undefined;
      out.push({
        agent,
        machine: s.machine,
        session: s.session,
        harness: clip(s.harness, 40),
        state: s.state,
        ...(s.cwd ? { cwd: clip(s.cwd, 300) } : {}),
        openTasks: s.openTasks,
        queuedTasks: s.queuedTasks,
        autoApprove: s.autoApprove,
        remindersStopped: s.remindersStopped,
        ...(s.lastSpokeAt ? { lastSpokeAt: s.lastSpokeAt } : {}),
        ...(s.task ? { task: workingOn(s.machine, s.task) } : {}),
        at: s.at,
        ttlMs: s.ttlMs,
        ...fresh,
        local,
        ...(url ? { dashboardUrl: url } : {}),
      });
    }
    return out.sort((a, b) => (a.local === b.local ? a.agent.localeCompare(b.agent) : a.local ? -1 : 1));
  }

  recentRefusals(): Refusal[] {
    return [...this.refusals];
  }

  recentNotes(): Note[] {
    return [...this.notes];
  }
}

/** Only plain http(s) URLs become links; anything else a bridge announces is not shown as one. */
export function dashboardUrl(gatewayUrl: string | undefined): string | undefined {
  if (!gatewayUrl) return undefined;
  try {
    const u = new URL(gatewayUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return `${u.origin}/dashboard`;
  } catch {
    return undefined;
  }
}

/** A signal's task (`SESSION:ID`) as the agents view shows it: its whole name, clipped, and its key. */
function workingOn(machine: string, task: string): { name: string; key?: string } {
  const name = clip(`${machine}/${task}`, 300);
  const key = keyOfName(name);
  return key ? { name, key } : { name };
}
