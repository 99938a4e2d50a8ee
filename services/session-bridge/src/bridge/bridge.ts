/**
 * The session-bridge (spec §5, §7): takes tasks for one session, keeps its queue, hands one task at
 * a time to the harness, and records every change in the ledger. This class is the front of the
 * house: the endpoints, the MCP tools, the watchdog and presence talk to it; the work is done in
 * its rooms — the session view (view.ts, pure), intake (intake.ts), the turn loop (turns.ts), the
 * worker's task_update (worker.ts), the permission relay (permissions.ts) and recovery (recovery.ts).
 *
 * Over 300 lines because it is the one front: about thirty short methods, most handing the act to
 * a room, so every caller's act can be found here.
 */
import { join } from 'node:path';
import {
  META,
  ShroomsError,
  isTerminal,
  keys,
  subjects,
  type CancelRequest,
  type ControlRequest,
  type DeliverRequest,
  type Part,
  type Task,
  type UpdateRequest,
} from '@shrooms/protocol';
import { localTaskKey, transitions, type Ledger, type Stored } from '@shrooms/ledger';
import { keepWatching, type Logger, type NatsConnection } from '@shrooms/runtime';
import type { BridgeConfig } from '../config.js';
import type { Harness, HarnessOptions, HarnessState, HarnessUpdateStatus } from '../harness/types.js';
import { TaskSpans } from '../tasks/spans.js';
import { activityEvents, type Activity, type Core, type PresenceState, type QuietState } from './core.js';
import { takeIn } from './intake.js';
import { WorkerLines } from './lines.js';
import { PermissionRelay } from './permissions.js';
import { Recovery } from './recovery.js';
import { Serial } from './serial.js';
import { TurnLoop } from './turns.js';
import { SessionView, type Current } from './view.js';
import { updateOrKeep } from './worker.js';
import { Outbox } from './outbox.js';
import { OUTBOX_FILE } from './outbox-file.js';

export type { PresenceState, QuietState } from './core.js';

export type HarnessFactory = (opts: HarnessOptions) => Harness;

export interface BridgeDeps {
  nc: NatsConnection;
  ledger: Ledger;
  config: BridgeConfig;
  log: Logger;
  createHarness: HarnessFactory;
  /**
   * Cancels a task of another session (a child of one of ours) through the mesh, saying why; the
   * cancel cascade uses it. Without it, children are left open (and the log says so).
   */
  cancelElsewhere?: (task: string, why: string) => Promise<unknown>;
  /** Built by the caller (harness-specific), passed to the harness. */
  harnessOptions: Omit<HarnessOptions, 'events' | 'tools' | 'log'>;
}

export class Bridge {
  readonly machine: string;
  readonly session: string;
  readonly log: Logger;
  private readonly core: Core;
  private readonly view = new SessionView();
  private readonly serial = new Serial();
  private readonly spans: TaskSpans;
  private readonly activity: Activity = {
    lines: new WorkerLines(),
    lastActivityAt: Date.now(),
    backgroundJobs: 0,
    remindersStopped: false,
  };
  private readonly turns: TurnLoop;
  private readonly permissions: PermissionRelay;
  private readonly recovery: Recovery;
  /** The worker's updates the ledger did not take, written when it answers. */
  private readonly outbox: Outbox;
  private readonly listeners = new Set<() => void>();
  private harness?: Harness;
  private stopWatch?: () => void;
  private unfollow?: () => void;
  private stopping = false;

  constructor(private readonly d: BridgeDeps) {
    this.machine = d.config.SHROOMS_MACHINE;
    this.session = d.config.BRIDGE_SESSION;
    this.log = d.log;
    this.spans = new TaskSpans(d.config.BRIDGE_HARNESS);
    this.core = {
      machine: this.machine,
      session: this.session,
      ledger: d.ledger,
      log: d.log,
      config: d.config,
      view: this.view,
      serial: this.serial,
      spans: this.spans,
      activity: this.activity,
      harness: () => this.harness!,
      harnessIdle: () => this.harnessState === 'idle',
      stopping: () => this.stopping,
      changed: () => this.changed(),
    };
    this.turns = new TurnLoop(this.core, { fail: (taskId, text) => this.workerUpdate(taskId, 'failed', text) });
    this.permissions = new PermissionRelay(this.core);
    this.recovery = new Recovery(this.core, this.turns, (task) => void this.cascade(task));
    this.outbox = new Outbox(
      this.core,
      () => {
        this.changed();
        void this.turns.pump();
      },
      { path: join(d.harnessOptions.stateDir, OUTBOX_FILE), machine: this.machine, session: this.session },
    );
  }

  get harnessState(): HarnessState {
    return this.harness?.state ?? 'starting';
  }

  async start(): Promise<void> {
    const a = this.activity;
    const activity = activityEvents(
      a,
      () => this.changed(),
      () => void this.turns.spoke(),
    );
    this.harness = this.d.createHarness({
      ...this.d.harnessOptions,
      log: this.log.child({ harness: this.d.config.BRIDGE_HARNESS }),
      events: {
        ...activity,
        state: (s) => {
          activity.state?.(s);
          if (s !== 'waiting') this.permissions.noneOpen();
        },
        trouble: (what) => void this.turns.trouble(what),
        permission: (req) =>
          void this.serial.run(() => this.permissions.ask(req)).catch((err) => this.log.warn({ err }, 'permission relay failed')),
        exit: (code) => void this.recovery.harnessExited(code),
      },
      // The echo harness finishes its tasks the way a worker does: through workerUpdate.
      tools: { taskUpdate: (taskId, status, text, parts) => this.workerUpdate(taskId, status, text, parts).then(() => undefined) },
    });
    // The bridge's own writes are followed as they are acknowledged and skipped by the watch (they
    // need no reconciling: whoever wrote them told the view already). The watch brings what others
    // write — the gateway's intake while the bridge was away, expiry, a cancel — and the rare own
    // write that comes back before its acknowledgement (reconciling it again is harmless).
    const prefix = keys.tasksOfSession(this.machine, this.session).slice(0, -1);
    this.unfollow = this.d.ledger.followWrites((s) => s.key.startsWith(prefix) && this.spans.observe(s));
    const initial = await this.watchSession();
    const harness = this.harness;
    await harness.start();
    // The worker's updates an earlier run kept through an outage are written first; their tasks
    // are not delivered again (the work is done).
    const kept = await this.outbox.restore();
    const working = initial.filter((s) => !kept.has(s.key));
    await this.serial.run(() => this.recovery.recover(working, harness.conversationLost));
    void this.turns.pump();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.outbox.stop();
    if (this.outbox.size)
      this.log.warn(
        { updates: this.outbox.size, file: this.outbox.keptIn },
        this.outbox.keptIn
          ? 'worker updates the ledger has not taken yet stay in the outbox file; the next start writes them'
          : 'worker updates the ledger has not taken yet are lost with this stop; the next start delivers their tasks again',
      );
    // A start held back (BRIDGE_WRITE_WAIT_MS) is written, so the next start counts the redelivery.
    await this.d.ledger.writeDeferred().catch((err: unknown) => this.log.warn({ err }, "a task's start was not written before the stop"));
    this.unfollow?.();
    this.stopWatch?.();
    this.spans.endAll();
    await this.harness?.stop();
  }

  /**
   * Follows the session's tasks in the ledger; resolves with the open tasks found (for recovery)
   * once they are in. A watch that ends by itself — its consumer lost with the NATS node that held
   * it — is started again (keepWatching), and every task it finds then is reconciled like a change
   * (the finished ones only when the view still holds them): nothing written meanwhile is missed.
   */
  private async watchSession(): Promise<Stored[]> {
    const initial: Stored[] = [];
    let ready!: () => void;
    const loaded = new Promise<void>((r) => (ready = r));
    const onEntry = (again: boolean) => (s: Stored, isUpdate: boolean) => {
      this.spans.observe(s);
      const open = !isTerminal(s.entry.task.status.state);
      // Finished tasks need no recovery (the view ignores them): holding them until the start is
      // done would make a restart's memory grow with the session's history, not its open tasks.
      if (!again && !isUpdate) {
        if (open) initial.push(s);
      } else if (isUpdate || open || this.view.knows(s.key)) void this.serial.run(() => this.recovery.reconcile(s));
    };
    this.stopWatch = await keepWatching(
      (ended, again) =>
        this.d.ledger.watch(keys.tasksOfSession(this.machine, this.session), onEntry(again), again ? undefined : ready, ended, {
          ownWrites: 'skip',
        }),
      { log: this.log, what: 'the ledger watch of the session' },
    );
    await loaded;
    return initial;
  }

  // ---- the endpoints ----------------------------------------------------------------------------

  /** Takes a message into the ledger; returns the task as stored and its entry version. */
  /** `created`: this delivery wrote a new task to the ledger (not a resend, not an answer). */
  async deliver(req: DeliverRequest): Promise<{ task: Task; v: number; created: boolean }> {
    if (req.machine !== this.machine || req.session !== this.session) {
      throw new ShroomsError('SESSION_NOT_FOUND', `this bridge serves ${this.machine}/${this.session}`);
    }
    const taskId = req.taskId;
    const permission = taskId ? await this.serial.run(() => this.permissions.answer({ ...req, taskId })) : undefined;
    if (permission) return { task: permission.entry.task, v: permission.entry.v, created: false };
    let result;
    try {
      result = await takeIn(this.core, req, this.turns);
    } catch (err) {
      // A failed intake may still have taken a task in (one the gateway queued meanwhile).
      void this.turns.pump();
      throw err;
    }
    // A task the free session took at once runs now; any other waits for the turn loop.
    if (result.started) void this.turns.run(result.stored);
    else void this.turns.pump();
    return { task: result.stored.entry.task, v: result.stored.entry.v, created: result.created && !taskId };
  }

  async cancel(req: CancelRequest): Promise<Task> {
    const key = localTaskKey(this.d.ledger, this.machine, this.session, req.taskId);
    const stored = await this.serial.run(async () => {
      const why = req.why ? { [META.cancelReason]: req.why } : {};
      const s = await this.d.ledger.transition(key, (e) => transitions.cancel(e, req.reason ?? req.origin.device, new Date(), why));
      await this.turns.drop(key);
      return s;
    });
    void this.turns.pump();
    void this.cascade(stored.entry.task);
    return stored.entry.task;
  }

  /**
   * The cancel cascade: a canceled task's open children (what its worker asked with `ask_agent`
   * while working on it, `shrooms/children`) are canceled too, each with `shrooms/cancel_reason`
   * "its parent MACHINE/SESSION:ID was canceled" — on whatever machine they run, as the asker may.
   * A child that already finished is left as it is.
   */
  async cascade(task: Task): Promise<void> {
    if (task.status.state !== 'TASK_STATE_CANCELED') return;
    const children = task.metadata?.[META.children];
    if (!Array.isArray(children) || children.length === 0) return;
    const why = `its parent ${this.machine}/${task.id} was canceled`;
    for (const child of children.map(String)) {
      if (!this.d.cancelElsewhere) {
        this.log.warn({ taskId: task.id, child }, 'cannot cancel a child task: this bridge has no client');
        continue;
      }
      await this.d.cancelElsewhere(child, why).then(
        () => this.log.info({ taskId: task.id, child }, 'child task canceled with its parent'),
        (err: unknown) => {
          if (err instanceof ShroomsError && err.key === 'TASK_NOT_CANCELABLE') return;
          this.log.warn({ err, taskId: task.id, child }, 'could not cancel a child task');
        },
      );
    }
  }

  /**
   * The worker asked `child` (MACHINE/SESSION:ID) while working on its task `taskId` (SESSION:ID):
   * kept on the task (`shrooms/children`, at most 100) for the cancel cascade.
   */
  async asked(taskId: string, child: string): Promise<void> {
    const key = localTaskKey(this.d.ledger, this.machine, this.session, taskId);
    await this.d.ledger.transition(key, (e) => {
      const had = e.task.metadata?.[META.children];
      const list = Array.isArray(had) ? had.map(String) : [];
      return list.includes(child) ? null : transitions.annotate(e, { [META.children]: [...list, child].slice(-100) });
    });
  }

  /** task_update from the worker: only for a task of this session on this machine. */
  async update(req: UpdateRequest): Promise<Task> {
    if (req.machine !== this.machine || req.session !== this.session) {
      throw new ShroomsError(
        'UPDATE_FORBIDDEN',
        `only ${this.machine}/${this.session} may update its tasks; ${req.machine}/${req.session} may not`,
      );
    }
    return this.workerUpdate(req.taskId, req.status, req.text, req.parts);
  }

  /**
   * The worker's own `task_update`, in-process: the MCP tools the bridge hosts and the echo harness
   * call this; the `update` endpoint calls it after checking who asks.
   */
  async workerUpdate(taskId: string, status: HarnessUpdateStatus, text: string, parts?: Part[]): Promise<Task> {
    try {
      return (await updateOrKeep(this.core, this.outbox, taskId, status, text, parts)).entry.task;
    } finally {
      this.changed();
      void this.turns.pump();
    }
  }

  async control(req: ControlRequest): Promise<{ task?: Task; remindersStopped: boolean }> {
    if (req.action === 'stop_reminders' || req.action === 'resume_reminders') {
      this.activity.remindersStopped = req.action === 'stop_reminders';
      this.changed();
      return { remindersStopped: this.activity.remindersStopped };
    }
    if (!req.taskId) throw new ShroomsError('INVALID_PARAMS', `${req.action} needs a taskId`);
    const key = localTaskKey(this.d.ledger, this.machine, this.session, req.taskId);
    const stored = await this.serial.run(async () => {
      if (req.action === 'reject') {
        const s = await this.d.ledger.transition(key, (e) =>
          transitions.reject(e, `rejected by the owner (${req.origin.device})`, new Date()),
        );
        await this.turns.drop(key);
        return s;
      }
      const s = await this.d.ledger.transition(key, (e) => transitions.annotate(e, { [META.held]: false }));
      this.view.unhold(s);
      return s;
    });
    void this.turns.pump();
    return { task: stored.entry.task, remindersStopped: this.activity.remindersStopped };
  }

  // ---- for the MCP tools, the watchdog and presence ------------------------------------------------

  /** The task the session works on now. */
  current(): Current | undefined {
    return this.view.current;
  }

  /** What the watchdog reads at each tick. */
  quiet(): QuietState {
    const a = this.activity;
    const current = this.view.current;
    return {
      harness: this.harnessState,
      remindersStopped: a.remindersStopped,
      backgroundJobs: a.backgroundJobs,
      lastActivityAt: a.lastActivityAt,
      lastWorkerLine: current ? a.lines.of(current.key) : '',
      ...(current ? { current } : {}),
    };
  }

  /** What the signal shows. */
  presence(): PresenceState {
    const a = this.activity;
    return {
      harness: this.harnessState,
      busy: this.view.busy(this.harnessState === 'idle'),
      openTasks: this.view.openCount,
      queuedTasks: this.view.waiting,
      ...(a.lastSpokeAt ? { lastSpokeAt: a.lastSpokeAt } : {}),
      remindersStopped: a.remindersStopped,
      ...(this.view.current ? { task: this.view.current.taskId } : {}),
    };
  }

  /** Calls `listener` on every change of the session's state; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The current task as stored. */
  async read(key: string): Promise<Stored | undefined> {
    return (await this.d.ledger.get(key)) ?? undefined;
  }

  /** Adds metadata to one of the session's tasks (the watchdog's counts, `shrooms/stalled`). */
  annotate(key: string, md: Record<string, unknown>): Promise<Stored> {
    return this.d.ledger.transition(key, (e) => transitions.annotate(e, md));
  }

  /** A note to the owner on `shrooms.notify.MACHINE.SESSION.KIND`. */
  notify(kind: 'reminder' | 'stalled', body: Record<string, unknown>): void {
    this.d.nc.publish(subjects.notify(this.machine, this.session, kind), JSON.stringify(body));
  }

  /** A reminder turn about the task `key`; the watchdog sends it only when the harness is idle. */
  remind(key: string, text: string): Promise<void> {
    return this.turns.remind(key, text);
  }

  /** Frees the session from a stalled task (it stays open) so the queue moves on. */
  release(key: string): Promise<void> {
    return this.turns.release(key);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
