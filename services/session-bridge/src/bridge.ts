/**
 * The session-bridge (spec §5, §7): takes tasks for one session, keeps its queue, hands one task at
 * a time to the harness, and records every change in the ledger. Its in-memory queue is a view of
 * the ledger, rebuilt from it at start and kept in step by a watch, so a restart loses nothing.
 */
import {
  META,
  ShroomsError,
  isTerminal,
  keys,
  type CancelRequest,
  type ControlRequest,
  type DeliverRequest,
  type Message,
  type Task,
  textOf,
  type UpdateRequest,
} from '@shrooms/protocol';
import { intake, localTaskKey, transitions, type Ledger, type LedgerEntry, type SignalField, type Stored } from '@shrooms/ledger';
import type { Logger, NatsConnection } from '@shrooms/runtime';
import type { BridgeConfig } from './config.js';
import type { Harness, HarnessOptions, HarnessState, PermissionRequest } from './harness/types.js';
import { answerText, deliveryText, isAnswer } from './prompt.js';
import { Serial } from './tasks/lock.js';
import { TaskQueue } from './tasks/queue.js';
import { TaskSpans } from './tasks/spans.js';

export type HarnessFactory = (opts: HarnessOptions) => Harness;

export interface BridgeDeps {
  nc: NatsConnection;
  ledger: Ledger;
  signals: SignalField;
  config: BridgeConfig;
  log: Logger;
  createHarness: HarnessFactory;
  /** Built by the caller (harness-specific), passed to the harness. */
  harnessOptions: Omit<HarnessOptions, 'events' | 'tools' | 'log'>;
}

interface Current {
  key: string;
  taskId: string;
  /** The task's trace context, for the worker's own asks. */
  traceparent?: string;
}

const REDELIVERIES = 'shrooms/redeliveries';

export class Bridge {
  readonly machine: string;
  readonly session: string;
  readonly queue = new TaskQueue();
  readonly held = new Map<string, string>(); // key → task id
  readonly open = new Map<string, string>(); // key → state, every open task of the session
  current?: Current;
  harness!: Harness;
  remindersStopped = false;
  lastSpokeAt?: string;
  /** When the harness last did anything (ms); the watchdog measures quiet from here. */
  lastActivityAt = Date.now();
  /** Background commands the session started that still run (the watchdog waits for them). */
  backgroundJobs = 0;
  private lastLine = '';
  private serial = new Serial();
  readonly spans: TaskSpans;
  private stopWatch?: () => void;
  private stopping = false;
  /** Listeners for bridge-level events (watchdog, presence). */
  readonly on: { change: Set<() => void>; turnEnd: Set<(taskKey: string | undefined) => void> } = { change: new Set(), turnEnd: new Set() };

  constructor(readonly d: BridgeDeps) {
    this.machine = d.config.SHROOMS_MACHINE;
    this.session = d.config.BRIDGE_SESSION;
    this.spans = new TaskSpans(d.config.BRIDGE_HARNESS);
  }

  get log(): Logger {
    return this.d.log;
  }

  get harnessState(): HarnessState {
    return this.harness?.state ?? 'starting';
  }

  /** Busy: a turn runs, a prompt waits, or a started task is still open (idle between turns is not free). */
  get busy(): boolean {
    return this.current !== undefined || this.harnessState !== 'idle';
  }

  async start(): Promise<void> {
    this.harness = this.d.createHarness({
      ...this.d.harnessOptions,
      log: this.log.child({ harness: this.d.config.BRIDGE_HARNESS }),
      events: {
        state: () => {
          this.lastActivityAt = Date.now();
          this.changed();
        },
        text: (line) => {
          this.lastLine = line.slice(-500);
          this.lastSpokeAt = new Date().toISOString();
          this.lastActivityAt = Date.now();
        },
        permission: (req) =>
          void this.serial.run(() => this.onPermission(req)).catch((err) => this.log.warn({ err }, 'permission relay failed')),
        backgroundJobs: (n) => {
          this.backgroundJobs = n;
          this.lastActivityAt = Date.now();
        },
        exit: (code) => void this.onHarnessExit(code),
      },
      tools: {
        taskUpdate: (taskId, status, text) =>
          this.update({ taskId, status, text, session: this.session, machine: this.machine }).then(() => undefined),
      },
    });
    const initial: Stored[] = [];
    let ready!: () => void;
    const loaded = new Promise<void>((r) => (ready = r));
    this.stopWatch = await this.d.ledger.watch(
      keys.tasksOfSession(this.machine, this.session),
      (s, isUpdate) => {
        this.spans.observe(s);
        if (isUpdate) void this.serial.run(() => this.reconcile(s));
        // Finished tasks need no recovery (track ignores them): holding them until the start is
        // done would make a restart's memory grow with the session's history, not its open tasks.
        else if (!isTerminal(s.entry.task.status.state)) initial.push(s);
      },
      () => ready(),
    );
    await loaded;
    await this.harness.start();
    await this.serial.run(() => this.recover(initial));
    void this.pump();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.stopWatch?.();
    this.spans.endAll();
    await this.harness?.stop();
  }

  // ---- the endpoints ----------------------------------------------------------------------------

  /** Takes a message into the ledger; returns the task as stored and its entry version. */
  async deliver(req: DeliverRequest): Promise<{ task: Task; v: number }> {
    if (req.machine !== this.machine || req.session !== this.session) {
      throw new ShroomsError('SESSION_NOT_FOUND', `this bridge serves ${this.machine}/${this.session}`);
    }
    const permission = req.taskId ? await this.serial.run(() => this.answerPermission(req)) : undefined;
    if (permission) return { task: permission.entry.task, v: permission.entry.v };
    const result = await this.serial.run(async () => {
      if (!req.taskId) this.checkRoom();
      const key = req.taskId ? '' : this.d.ledger.key(this.machine, this.session, req.message.messageId);
      if (!req.taskId && !(await this.d.ledger.get(key))) {
        const traceparent = this.spans.begin(key, {
          taskId: `${this.session}:${req.message.messageId}`,
          session: `${this.machine}/${this.session}`,
          device: req.origin.device,
          from: req.origin.from,
          depth: Number(req.metadata[META.depth] ?? 0),
        });
        if (traceparent) req = { ...req, metadata: { ...req.metadata, [META.traceparent]: traceparent } };
      }
      const r = await intake(this.d.ledger, req, { queued: this.busy || this.queue.length > 0 });
      if (!r.created && key) this.spans.discard(key);
      if (r.created || r.answered) this.track(r.stored);
      return r;
    });
    void this.pump();
    return { task: result.stored.entry.task, v: result.stored.entry.v };
  }

  async cancel(req: CancelRequest): Promise<Task> {
    const key = localTaskKey(this.d.ledger, this.machine, this.session, req.taskId);
    const stored = await this.serial.run(async () => {
      const s = await this.d.ledger.transition(key, (e) => transitions.cancel(e, req.reason ?? req.origin.device, new Date()));
      await this.forget(key);
      return s;
    });
    void this.pump();
    return stored.entry.task;
  }

  /** task_update from the worker: only for a task of this session on this machine. */
  async update(req: UpdateRequest): Promise<Task> {
    if (req.machine !== this.machine || req.session !== this.session) {
      throw new ShroomsError(
        'UPDATE_FORBIDDEN',
        `only ${this.machine}/${this.session} may update its tasks; ${req.machine}/${req.session} may not`,
      );
    }
    let key: string;
    try {
      key = localTaskKey(this.d.ledger, this.machine, this.session, req.taskId);
    } catch {
      throw new ShroomsError('UPDATE_FORBIDDEN', `task ${req.taskId} is not a task of ${this.machine}/${this.session}`);
    }
    const now = new Date();
    const stored = await this.serial.run(async () => {
      const s = await this.d.ledger.transition(key, (e) => {
        const md = this.lastLine ? { [META.lastWorkerLine]: this.lastLine } : {};
        if (req.status === 'done') return transitions.complete(withMeta(e, md), req.text, now);
        if (req.status === 'blocked') return transitions.block(e, req.text, now, md);
        return transitions.fail(e, req.text, now, md);
      });
      if (req.status === 'blocked') this.open.set(key, s.entry.task.status.state);
      else this.open.delete(key);
      if (this.current?.key === key) this.current = undefined;
      this.queue.remove(key);
      return s;
    });
    this.changed();
    void this.pump();
    return stored.entry.task;
  }

  async control(req: ControlRequest): Promise<{ task?: Task; remindersStopped: boolean }> {
    if (req.action === 'stop_reminders' || req.action === 'resume_reminders') {
      this.remindersStopped = req.action === 'stop_reminders';
      this.changed();
      return { remindersStopped: this.remindersStopped };
    }
    if (!req.taskId) throw new ShroomsError('INVALID_PARAMS', `${req.action} needs a taskId`);
    const key = localTaskKey(this.d.ledger, this.machine, this.session, req.taskId);
    const stored = await this.serial.run(async () => {
      if (req.action === 'reject') {
        const s = await this.d.ledger.transition(key, (e) =>
          transitions.reject(e, `rejected by the owner (${req.origin.device})`, new Date()),
        );
        await this.forget(key);
        return s;
      }
      const s = await this.d.ledger.transition(key, (e) => transitions.annotate(e, { [META.held]: false }));
      this.held.delete(key);
      if (!isTerminal(s.entry.task.status.state)) this.enqueue(s);
      return s;
    });
    void this.pump();
    return { task: stored.entry.task, remindersStopped: this.remindersStopped };
  }

  // ---- permission prompts (Claude Code) --------------------------------------------------------

  /** A prompt waiting on the worker's machine shows as INPUT_REQUIRED with what it asks (spec §5). */
  private async onPermission(req: PermissionRequest): Promise<void> {
    const cur = this.current;
    if (!cur) {
      this.harness.answerPermission(req.id, false);
      return;
    }
    const input = JSON.stringify(req.input ?? {}).slice(0, 500);
    const question = `permission needed: the session wants to run ${req.tool} ${input}. Answer "allow" or "deny".`;
    await this.d.ledger.transition(cur.key, (e) =>
      transitions.block(e, question, new Date(), { [META.permission]: { id: req.id, tool: req.tool } }),
    );
    this.log.info({ task_id: cur.taskId, tool: req.tool }, 'permission prompt relayed as input-required');
  }

  /** An answer to a task waiting on a permission prompt goes to the prompt, and the task works on. */
  private async answerPermission(req: DeliverRequest): Promise<Stored | undefined> {
    const key = localTaskKey(this.d.ledger, this.machine, this.session, req.taskId!);
    const cur = await this.d.ledger.get(key);
    const pending = cur?.entry.task.metadata?.[META.permission] as { id?: string } | undefined;
    if (!cur || cur.entry.task.status.state !== 'TASK_STATE_INPUT_REQUIRED' || !pending?.id || this.current?.key !== key) return undefined;
    const allow = /^\s*(y|yes|allow|allowed|ok|okay|approve|approved|go)\b/i.test(textOf(req.message));
    const stored = await this.d.ledger.transition(key, (e) => resumeWorking(e, req.message, new Date()));
    this.harness.answerPermission(pending.id, allow);
    this.log.info({ task_id: cur.entry.task.id, allow }, 'permission prompt answered');
    return stored;
  }

  // ---- the queue --------------------------------------------------------------------------------

  private checkRoom(): void {
    if (this.queue.length + this.held.size >= this.d.config.LIMIT_QUEUE_LENGTH) {
      throw new ShroomsError(
        'QUEUE_FULL',
        `${this.machine}/${this.session} has ${this.queue.length} tasks waiting; the limit is ${this.d.config.LIMIT_QUEUE_LENGTH}`,
        {
          limit: 'queueLength',
          max: this.d.config.LIMIT_QUEUE_LENGTH,
        },
      );
    }
    if (this.open.size >= this.d.config.LIMIT_OPEN_TASKS) {
      throw new ShroomsError(
        'LIMIT_EXCEEDED',
        `${this.machine}/${this.session} has ${this.open.size} open tasks; the limit is ${this.d.config.LIMIT_OPEN_TASKS}`,
        {
          limit: 'openTasksPerSession',
          max: this.d.config.LIMIT_OPEN_TASKS,
        },
      );
    }
  }

  /** Takes a stored task into the bridge's view (queue, held or open). */
  private track(s: Stored): void {
    const t = s.entry.task;
    if (isTerminal(t.status.state)) return;
    this.open.set(s.key, t.status.state);
    if (t.status.state !== 'TASK_STATE_SUBMITTED') return;
    if (t.metadata?.[META.held] === true) this.held.set(s.key, t.id);
    else this.enqueue(s);
  }

  private enqueue(s: Stored): void {
    if (this.current?.key === s.key) return;
    const askedAt = Date.parse(String(s.entry.task.metadata?.[META.createdAt] ?? '')) || Date.now();
    this.queue.add({ key: s.key, taskId: s.entry.task.id, answer: isAnswer(s.entry.task), askedAt });
  }

  private async forget(key: string): Promise<void> {
    this.queue.remove(key);
    this.held.delete(key);
    this.open.delete(key);
    if (this.current?.key === key) {
      this.current = undefined;
      if (this.harness.state === 'busy' || this.harness.state === 'waiting')
        await this.harness.cancel().catch((err) => this.log.warn({ err }, 'cancel failed'));
    }
    this.changed();
  }

  /** Starts the next task when the session is free. */
  async pump(): Promise<void> {
    const next = await this.serial.run(async () => {
      if (this.stopping || this.busy) return undefined;
      for (let q = this.queue.shift(); q; q = this.queue.shift()) {
        try {
          const s = await this.d.ledger.transition(q.key, (e) => transitions.start(e, new Date()));
          const tp = s.entry.task.metadata?.[META.traceparent];
          this.current = { key: q.key, taskId: q.taskId, ...(typeof tp === 'string' ? { traceparent: tp } : {}) };
          this.open.set(q.key, s.entry.task.status.state);
          this.changed();
          return s;
        } catch (err) {
          if (err instanceof ShroomsError) continue; // finished or gone meanwhile
          this.queue.add(q);
          throw err;
        }
      }
      return undefined;
    });
    if (next) void this.runTurn(next);
  }

  private async runTurn(s: Stored): Promise<void> {
    const task = s.entry.task;
    const text = isAnswer(task) ? answerText(task) : deliveryText(task);
    const turnId = `${task.id}#${s.entry.v}`;
    try {
      const r = await this.harness.send(turnId, text, task.id);
      if (r.text) this.lastLine = r.text.slice(-500);
      if (r.status === 'failed' && this.current?.key === s.key) {
        await this.update({
          taskId: task.id,
          status: 'failed',
          text: `the session's turn failed: ${r.error ?? r.text}`,
          session: this.session,
          machine: this.machine,
        }).catch(() => {});
      } else if (this.lastLine && this.current?.key === s.key) {
        await this.d.ledger.transition(s.key, (e) => transitions.annotate(e, { [META.lastWorkerLine]: this.lastLine })).catch(() => {});
      }
    } catch (err) {
      this.log.warn({ err, taskId: task.id }, 'turn ended abnormally');
    } finally {
      for (const l of this.on.turnEnd) l(this.current?.key);
      this.changed();
      void this.pump();
    }
  }

  /** A reminder turn (no task of its own); the watchdog calls it only when the harness is idle. */
  async remind(text: string): Promise<void> {
    try {
      const r = await this.harness.send(`reminder-${Date.now()}`, text);
      if (r.text) this.lastLine = r.text.slice(-500);
    } finally {
      this.lastActivityAt = Date.now();
      this.changed();
      void this.pump();
    }
  }

  /** Frees the session from a stalled task (it stays open) so the queue moves on. */
  async release(key: string): Promise<void> {
    await this.serial.run(async () => {
      if (this.current?.key === key) this.current = undefined;
    });
    this.changed();
    void this.pump();
  }

  // ---- recovery ---------------------------------------------------------------------------------

  /** After a restart: tasks that were working are delivered again (per policy), the queue rebuilt. */
  private async recover(initial: Stored[]): Promise<void> {
    for (const s of initial) {
      const t = s.entry.task;
      if (t.status.state !== 'TASK_STATE_WORKING') {
        this.track(s);
        continue;
      }
      const n = Number(t.metadata?.[REDELIVERIES] ?? 0);
      const now = new Date();
      if (n >= this.d.config.BRIDGE_REDELIVERIES) {
        await this.d.ledger
          .transition(s.key, (e) => transitions.fail(e, `the session stopped ${n + 1} times while working on this task`, now))
          .catch(() => {});
        continue;
      }
      const back = await this.d.ledger.transition(s.key, (e) => requeue(e, n + 1, now));
      this.log.info({ taskId: t.id, redelivery: n + 1 }, 'delivering a task again after a restart');
      this.track(back);
    }
    this.changed();
  }

  /** Changes made by others (gateway fallback intake, expiry, cancel while we were busy). */
  private async reconcile(s: Stored): Promise<void> {
    const t = s.entry.task;
    if (isTerminal(t.status.state)) {
      if (this.open.has(s.key) || this.queue.has(s.key) || this.current?.key === s.key) await this.forget(s.key);
      return;
    }
    if (t.status.state === 'TASK_STATE_SUBMITTED' && this.current?.key !== s.key && !this.queue.has(s.key) && !this.held.has(s.key)) {
      const fresh = await this.d.ledger.get(s.key);
      if (fresh && fresh.entry.task.status.state === 'TASK_STATE_SUBMITTED') {
        this.track(fresh);
        void this.pump();
      }
    }
  }

  private async onHarnessExit(code: number | null): Promise<void> {
    if (this.stopping) return;
    this.log.warn({ code }, 'harness exited; restarting it');
    await this.serial.run(async () => {
      const cur = this.current;
      this.current = undefined;
      if (!cur) return;
      const stored = await this.d.ledger.get(cur.key);
      if (stored && stored.entry.task.status.state === 'TASK_STATE_WORKING') await this.recover([stored]);
    });
    try {
      await this.harness.start();
    } catch (err) {
      this.log.error({ err }, 'harness restart failed');
    }
    void this.pump();
  }

  private changed(): void {
    for (const l of this.on.change) l();
  }

  lastWorkerLine(): string {
    return this.lastLine;
  }
}

function withMeta(e: LedgerEntry, md: Record<string, unknown>): LedgerEntry {
  return Object.keys(md).length ? { ...e, task: { ...e.task, metadata: { ...e.task.metadata, ...md } } } : e;
}

/** INPUT_REQUIRED (a permission prompt) → WORKING with the answer in the history. */
function resumeWorking(e: LedgerEntry, message: Message, now: Date): LedgerEntry {
  const task = structuredClone(e.task);
  task.status = { state: 'TASK_STATE_WORKING', timestamp: now.toISOString() };
  task.history = [...(task.history ?? []), { ...message, taskId: task.id, contextId: task.contextId }];
  task.metadata = { ...task.metadata };
  delete task.metadata[META.permission];
  return { v: e.v + 1, task, events: [{ statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } }] };
}

/** WORKING → SUBMITTED (queued again), counting the redelivery. */
function requeue(e: LedgerEntry, n: number, now: Date): LedgerEntry {
  const task = structuredClone(e.task);
  task.status = { state: 'TASK_STATE_SUBMITTED', timestamp: now.toISOString() };
  task.metadata = { ...task.metadata, [META.queued]: true, [REDELIVERIES]: n };
  return {
    v: e.v + 1,
    task,
    events: [{ statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: { [REDELIVERIES]: n } } }],
  };
}
