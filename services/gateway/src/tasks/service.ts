/**
 * The gateway's task operations over NATS and the ledger; the A2A bindings call these. Nothing here
 * knows about HTTP.
 *
 * Over 300 lines because every task operation (submit, deliver, cancel, update, controls, reads)
 * applies the same authorization and ledger steps; the parts that stand alone live beside it.
 */
import {
  META,
  ShroomsError,
  isInterrupted,
  isTerminal,
  isScheduledMessageId,
  parseAgent,
  parseTaskName,
  type DeliverRequest,
  type ListTasksParams,
  type ListTasksResult,
  type Message,
  type GuardControlRequest,
  type Metadata,
  type Part,
  type SendMessageParams,
  type Task,
  withFields,
} from '@shrooms/protocol';
import {
  assertResend,
  intake,
  localTaskKey,
  transitions,
  viewTask,
  type Ledger,
  type LedgerEntry,
  type SignalField,
  type Stored,
} from '@shrooms/ledger';
import { bridgeClient, type BridgeClient } from '@shrooms/client';
import { isNatsOutage, natsUnavailable, traceparentOf, type NatsConnection } from '@shrooms/runtime';
import type { Logger } from '@shrooms/runtime';
import { authorize, waitsOnPermission } from '../authz/rules.js';
import type { Caller } from './caller.js';
import type { ClientGone, LiveTasks } from './live.js';
import { looseParams } from '../a2a/params.js';
import { DeviceShares } from './shares.js';
import { validateMessage, type MessageLimits } from './validate.js';
import { budgetAgent, chainOf, claimedSignal, occurrenceMetadata, resultMetadata } from './derive.js';
import type { ScheduleProof } from './scheduled.js';

export interface GuardPort {
  /** Asks the guard whether a new task may be admitted; throws a ShroomsError refusal. */
  admit(req: {
    machine: string;
    session: string;
    taskId: string;
    caller: Caller;
    parent?: string;
    chain: string[];
    depth: number;
    metadata: Metadata;
    /** Proven to be a schedule's occurrence (scheduled.ts), not claimed. */
    scheduled: boolean;
    /** Who the agent budget counts (derive.ts `budgetAgent`). */
    agent?: string;
  }): Promise<{ hold: boolean }>;
  /** The guard's control endpoint (the loop-guard window of a device and session). */
  control?(req: GuardControlRequest): Promise<Record<string, unknown>>;
}

export interface TaskServiceDeps {
  nc: NatsConnection;
  ledger: Ledger;
  signals: SignalField;
  live: LiveTasks;
  machine: string;
  guard?: GuardPort;
  /** Tells a schedule's occurrence from a request that only claims to be one. */
  scheduled?: ScheduleProof;
  log: Logger;
  limits: MessageLimits & { blockingWaitMs: number; deliveryAckMs: number; blockingWaitsPerDevice: number };
}

const finished = (e: LedgerEntry) => isTerminal(e.task.status.state) || isInterrupted(e.task.status.state);

export class TaskService {
  private readonly bridges: BridgeClient;
  /** Blocking SendMessage waits each device holds (LIMIT_BLOCKING_WAITS_PER_DEVICE). */
  private readonly waits: DeviceShares;

  constructor(readonly d: TaskServiceDeps) {
    this.bridges = bridgeClient(d.nc, { timeoutMs: d.limits.deliveryAckMs });
    this.waits = new DeviceShares(d.limits.blockingWaitsPerDevice, { limit: 'blockingWaitsPerDevice', what: 'blocking SendMessage waits' });
  }

  get machine(): string {
    return this.d.machine;
  }

  /** A session exists when its bridge's signal is live or the ledger holds tasks of it. */
  async sessionExists(session: string): Promise<boolean> {
    if ((await this.d.signals.get(this.machine, session)) !== null) return true;
    return this.d.live.hasTasks(session);
  }

  async requireSession(session: string): Promise<void> {
    if (!(await this.sessionExists(session))) throw new ShroomsError('SESSION_NOT_FOUND', `no session ${this.machine}/${session}`);
  }

  keyOf(session: string, taskId: string): string {
    return localTaskKey(this.d.ledger, this.machine, session, taskId);
  }

  /** The ledger key a SendMessage's task has (or will have). */
  keyOfSend(session: string, params: SendMessageParams): string {
    const { taskId, messageId } = params.message;
    return taskId ? this.keyOf(session, taskId) : this.d.ledger.key(this.machine, session, messageId);
  }

  /**
   * SendMessage without waiting: the task as the bridge (or the ledger) took it. The caller has
   * checked that the session exists (`requireSession`; both A2A send methods do, before anything
   * else), so a new task costs no second look-up of it.
   */
  async submit(
    session: string,
    params: SendMessageParams,
    caller: Caller,
    opts: { awaited?: boolean } = {},
  ): Promise<{ stored: Stored; key: string }> {
    validateMessage(params.message, this.d.limits, params.metadata);
    const proof =
      !params.message.taskId && this.d.scheduled ? await this.d.scheduled(params, { machine: this.machine, session }, caller) : undefined;
    // A proven occurrence has its schedule's metadata as the record gives it, and speaks for the
    // schedule's owner (as the scheduler sends it), whatever the request claims; a result keeps just
    // which schedule and occurrence it answers; from anyone else the mesh's keys are dropped.
    const occurrence = proof?.kind === 'occurrence' ? proof : undefined;
    const derive = (md: Metadata | undefined) => (occurrence ? occurrenceMetadata(occurrence.metadata, md) : resultMetadata(proof, md));
    const message = withMetadata(params.message, derive(params.message.metadata));
    const metadata: Metadata = { ...derive(params.metadata) };
    const asker = occurrence ? claiming(caller, occurrence.metadata[META.from]) : caller;
    const taskId = message.taskId;
    if (taskId) {
      const key = this.keyOf(session, taskId);
      const cur = await this.d.ledger.get(key);
      if (!cur) throw new ShroomsError('TASK_NOT_FOUND', `no task ${taskId} on ${this.machine}/${session}`);
      const task = cur.entry.task;
      const permission = waitsOnPermission(task);
      authorize(permission ? 'answer_permission' : 'answer', caller, { machine: this.machine, session, task });
      const stored = await this.deliver(session, { message, metadata, taskId, ...(permission ? { permission } : {}) }, caller, key);
      return { stored, key };
    }
    authorize('send', asker, { machine: this.machine, session });
    // The scheduler's message ids are its own: taken by another, the ledger would make that sender
    // the occurrence's asker, or put its words in a result's place (scheduled.ts).
    if (isScheduledMessageId(message.messageId)) authorize('send_scheduled', caller, { machine: this.machine, session, proven: !!proof });
    const key = this.keyOfSend(session, params);
    // A resend is a key the session's listing index has seen (it follows the ledger, and this
    // gateway's own deliveries are applied to it at once): a key it never saw costs no read (until
    // the session's index is built, every key is read). A resend racing its
    // first send (both in flight) meets the first in the bridge's intake, which answers it with the
    // stored task, and the guard counts one task id once.
    const existing = this.d.live.mayExist(key) ? await this.d.ledger.get(key) : null;
    if (existing) {
      // A resend of the same message is the same task, never a second one (and never counted).
      assertResend(existing, message, asker.device);
      return { stored: existing, key };
    }
    const signal = await claimedSignal(this.d.signals, asker);
    const chain = await chainOf(this.d.ledger, asker, metadata[META.parent] ?? message.metadata?.[META.parent], {
      root: proof !== undefined,
      ...(signal?.task ? { working: `${signal.machine}/${signal.task}` } : {}),
    });
    Object.assign(metadata, chain.metadata);
    if (!chain.parent) delete metadata[META.parent];
    if (this.d.guard) {
      const decision = await this.d.guard.admit({
        machine: this.machine,
        session,
        taskId: `${this.machine}/${session}:${message.messageId}`,
        caller: asker,
        parent: chain.parent,
        chain: chain.chain,
        depth: chain.depth,
        metadata,
        scheduled: proof?.kind === 'occurrence',
        agent: budgetAgent(asker, signal),
      });
      if (decision.hold) metadata[META.held] = true;
    }
    const stored = await this.deliver(session, { message, metadata, ...(opts.awaited ? { awaited: true } : {}) }, asker, key);
    return { stored, key };
  }

  /** SendMessage: submits, then waits (unless told not to) until the task finishes or needs input. */
  async send(session: string, params: SendMessageParams, caller: Caller, gone?: ClientGone): Promise<Task> {
    const cfg = params.configuration;
    const immediate = cfg?.returnImmediately === true || cfg?.blocking === false;
    if (immediate) return viewTask((await this.submit(session, params, caller)).stored.entry.task, { historyLength: cfg?.historyLength });
    // Listen before submitting: the entry the submit returns is then the read the wait starts
    // from, and every later change reaches the listener (one ledger read fewer per blocking send).
    // The message is checked first so that its errors come before those of its task id, as in submit.
    validateMessage(params.message, this.d.limits, params.metadata);
    // Taken before the task is made: a refused wait leaves nothing behind.
    const release = this.waits.take(caller.device);
    let stored: Stored | undefined;
    let out: Stored | null;
    try {
      out = await this.d.live.waitFor(
        this.keyOfSend(session, params),
        finished,
        this.d.limits.blockingWaitMs,
        gone,
        // Nobody hears of the task before its end: its bridge may store it with its next change.
        async () => (stored = (await this.submit(session, params, caller, { awaited: true })).stored),
      );
    } catch (err) {
      // NATS went away after the task was taken: it is kept; the same message again follows it.
      if (stored && (isNatsOutage(err) || (err instanceof ShroomsError && err.key === 'NATS_UNAVAILABLE')))
        throw natsUnavailable(
          `NATS went away while this request waited for task ${stored.entry.task.id}; the task is kept: send the same message again to follow it`,
          { taskId: stored.entry.task.id },
        );
      throw err;
    } finally {
      release();
    }
    return viewTask((out ?? stored!).entry.task, { historyLength: cfg?.historyLength });
  }

  private async deliver(
    session: string,
    /** `permission`: the message answers a permission prompt (never taken into the ledger here). */
    part: Pick<DeliverRequest, 'message' | 'metadata' | 'taskId' | 'awaited'> & { permission?: boolean },
    caller: Caller,
    key: string,
  ): Promise<Stored> {
    const traceparent = traceparentOf();
    const req: DeliverRequest = {
      machine: this.machine,
      session,
      message: part.message,
      metadata: traceparent ? withFields(part.metadata, { [META.traceparent]: traceparent }) : part.metadata,
      origin: { device: caller.device, ...(caller.from ? { from: caller.from } : {}) },
      ...(part.taskId ? { taskId: part.taskId } : {}),
      ...(part.awaited ? { awaited: true } : {}),
    };
    try {
      const reply = req.taskId ? await this.bridges.deliver(req) : await this.deliverNew(req, key);
      if ('entry' in reply) return reply;
      // The bridge answers the task as stored, with its version: no need to read it back. Later
      // changes reach waiters and streams through the watch (they skip versions they have seen).
      if (typeof reply.v === 'number') {
        const stored: Stored = { key, revision: 0, entry: { v: reply.v, task: reply.task, events: [] } };
        this.d.live.apply(stored);
        return stored;
      }
      const fresh = await this.d.ledger.get(key);
      if (fresh) this.d.live.apply(fresh);
      return fresh ?? { key, revision: 0, entry: { v: 0, task: reply.task, events: [] } };
    } catch (err) {
      if (!(err instanceof ShroomsError) || err.key !== 'BRIDGE_UNAVAILABLE') throw err;
      // An answer to a permission prompt goes to the prompt, which is in the session's CLI: only its
      // bridge can pass it on. Taken into the ledger here it would queue the task while the prompt
      // waits on, for good; the client tries again (the bridge that comes back asks again).
      if (part.permission)
        throw new ShroomsError(
          'BRIDGE_UNAVAILABLE',
          `${this.machine}/${session} is not answering; its permission prompt can only be answered through it, retry`,
        );
      // The bridge is down: the task waits in the ledger and its bridge takes it up when it starts.
      this.d.log.warn({ session, key }, 'bridge not answering; task queued in the ledger');
      const result = await intake(this.d.ledger, req, { queued: true });
      this.d.live.apply(result.stored);
      return result.stored;
    }
  }

  /**
   * A new task's delivery, quiet: a bridge that stores the task sends no reply, and this gateway's
   * ledger watch shows the stored task instead — the client still hears of it only once it is in
   * the ledger. An entry under the key for another device or content is not this delivery's (the
   * bridge answers that one with its refusal); a bridge that replies anyway is answered as before.
   */
  private async deliverNew(req: DeliverRequest, key: string): Promise<Stored | { task: Task; v?: number }> {
    let unlisten!: () => void;
    const seen = new Promise<Stored>((resolve) => {
      unlisten = this.d.live.listen(key, (s) => {
        try {
          assertResend(s, req.message, req.origin.device);
        } catch {
          return;
        }
        resolve(s);
      });
    });
    try {
      const r = await this.bridges.deliverQuietly(req, seen);
      return 'seen' in r ? r.seen : r.reply;
    } finally {
      unlisten();
    }
  }

  /** A task as stored, for a caller the `read` rule lets read it; TASK_NOT_FOUND when there is none. */
  async read(session: string, taskId: string, caller: Caller): Promise<Stored> {
    const stored = await this.d.ledger.get(this.keyOf(session, taskId));
    if (!stored) throw new ShroomsError('TASK_NOT_FOUND', `no task ${taskId} on ${this.machine}/${session}`);
    authorize('read', caller, { machine: this.machine, session, task: stored.entry.task });
    return stored;
  }

  async get(session: string, taskId: string, caller: Caller, historyLength?: number): Promise<Task> {
    return viewTask((await this.read(session, taskId, caller)).entry.task, { historyLength });
  }

  async list(session: string, q: ListTasksParams, caller: Caller): Promise<ListTasksResult> {
    authorize('read', caller, { machine: this.machine, session });
    await this.d.live.session(session);
    const pageSize = q.pageSize ?? 50;
    let before: number | undefined;
    if (q.pageToken) {
      before = Number(Buffer.from(q.pageToken, 'base64url').toString());
      if (!Number.isSafeInteger(before) || before <= 0)
        throw new ShroomsError('INVALID_PARAMS', 'pageToken is not one this server gave out');
    }
    const page = this.d.live.index.page(session, {
      contextId: q.contextId,
      status: q.status,
      statusAfter: q.statusTimestampAfter ? Date.parse(q.statusTimestampAfter) : undefined,
      pageSize,
      before,
    });
    const stored = await Promise.all(page.keys.map((k) => this.d.ledger.get(k)));
    // Gone from the ledger (its retention, counted from the last write) before the index let it go.
    page.keys.forEach((k, i) => stored[i] === null && this.d.live.index.remove(k, session));
    const tasks = stored
      .filter((s): s is Stored => s !== null)
      .map((s) => viewTask(s.entry.task, { historyLength: q.historyLength, includeArtifacts: q.includeArtifacts ?? false }));
    return {
      tasks,
      nextPageToken: page.next !== undefined ? Buffer.from(String(page.next)).toString('base64url') : '',
      pageSize,
      totalSize: page.total,
    };
  }

  /** `why`: the asker's stated cause, kept as `shrooms/cancel_reason` (a parent's bridge cancelling its children says so). */
  async cancel(session: string, taskId: string, caller: Caller, why?: string): Promise<Task> {
    const key = this.keyOf(session, taskId);
    const cur = await this.d.ledger.get(key);
    if (!cur) throw new ShroomsError('TASK_NOT_FOUND', `no task ${taskId} on ${this.machine}/${session}`);
    authorize('cancel', caller, { machine: this.machine, session, task: cur.entry.task });
    const state = cur.entry.task.status.state;
    if (state === 'TASK_STATE_CANCELED') return cur.entry.task;
    if (isTerminal(state)) throw new ShroomsError('TASK_NOT_CANCELABLE', `task ${taskId} is already ${state}`);
    const by = caller.from ? `${caller.device} (${caller.from})` : caller.device;
    try {
      return await this.bridges.cancel(this.machine, session, {
        taskId: cur.entry.task.id,
        origin: { device: caller.device, ...(caller.from ? { from: caller.from } : {}) },
        reason: by,
        ...(why ? { why } : {}),
      });
    } catch (err) {
      if (!(err instanceof ShroomsError) || err.key !== 'BRIDGE_UNAVAILABLE') throw err;
      const stored = await this.d.ledger.transition(key, (e) =>
        transitions.cancel(e, by, new Date(), why ? { [META.cancelReason]: why } : {}),
      );
      this.d.live.apply(stored);
      return stored.entry.task;
    }
  }

  /** task_update from a worker: only from this machine, only by the session the task belongs to. */
  async workerUpdate(
    session: string,
    taskId: string,
    status: 'done' | 'blocked' | 'failed',
    text: string,
    caller: Caller,
    parts?: Part[],
  ): Promise<Task> {
    authorize('update', caller, { machine: this.machine, session });
    const key = this.keyOf(session, taskId);
    const cur = await this.d.ledger.get(key);
    if (!cur) throw new ShroomsError('TASK_NOT_FOUND', `no task ${taskId} on ${this.machine}/${session}`);
    return this.bridges.update({ taskId: cur.entry.task.id, status, text, session, machine: this.machine, ...(parts ? { parts } : {}) });
  }

  /** The owner's controls, from this machine only: release/reject a held task, stop/resume reminders. */
  async control(
    session: string,
    action: 'release' | 'reject' | 'stop_reminders' | 'resume_reminders',
    taskId: string | undefined,
    caller: Caller,
  ): Promise<unknown> {
    authorize(action === 'release' || action === 'reject' ? action : 'control', caller, { machine: this.machine, session });
    return this.bridges.control(this.machine, session, { action, ...(taskId ? { taskId } : {}), origin: { device: caller.device } });
  }

  /**
   * The loop-guard window `device` → this session (default: the caller's own device), emptied first
   * with `reset`. Only the session owner's machine may look or reset: a person locked out while
   * testing from the CLI, across `up` restarts (the window lives in the guard's bucket).
   */
  async guardWindow(session: string, caller: Caller, device = caller.device, reset = false): Promise<Record<string, unknown>> {
    // The rule first: it needs no I/O, and a non-owner learns nothing of which sessions exist.
    authorize('control', caller, { machine: this.machine, session });
    await this.requireSession(session);
    const control = this.d.guard?.control;
    if (!control) throw new ShroomsError('GUARD_UNAVAILABLE', 'this gateway runs without a guard (GATEWAY_GUARD=off): there is no window');
    const target = { device, machine: this.machine, session };
    if (reset) await control({ action: 'counters.reset', ...target });
    return { ...target, ...(await control({ action: 'counters.get', ...target })) };
  }

  async ack(session: string, taskId: string, caller: Caller): Promise<Task> {
    const key = this.keyOf(session, taskId);
    const cur = await this.d.ledger.get(key);
    if (!cur) throw new ShroomsError('TASK_NOT_FOUND', `no task ${taskId} on ${this.machine}/${session}`);
    authorize('ack', caller, { machine: this.machine, session, task: cur.entry.task });
    const by = caller.from ? `${caller.device} (${caller.from})` : caller.device;
    const stored = await this.d.ledger.transition(key, (e) =>
      transitions.annotate(e, { [META.acknowledged]: { at: new Date().toISOString(), by } }),
    );
    this.d.live.apply(stored);
    return stored.entry.task;
  }

  /** Cancels open tasks of this machine asked longer ago than `expiryMs` (spec §5). */
  async sweepExpired(expiryMs: number, now = Date.now()): Promise<number> {
    await this.d.live.openKnown();
    let n = 0;
    for (const s of this.d.live.openAskedBefore(now - expiryMs)) {
      try {
        let expired = false;
        const stored = await this.d.ledger.transition(s.key, (e) => {
          const next = transitions.expire(e, new Date(now));
          expired = next !== null;
          return next;
        });
        this.d.live.apply(stored);
        if (expired) this.d.log.info({ key: s.key, askedAt: new Date(s.createdAt).toISOString() }, 'task expired');
        n++;
      } catch (err) {
        // A task the ledger let go (its retention) is nothing to expire.
        if (err instanceof ShroomsError && err.key === 'TASK_NOT_FOUND') this.d.live.forgetOpen(s.key);
        else this.d.log.warn({ err, key: s.key }, 'expiry failed');
      }
    }
    return n;
  }

  /**
   * Route for `POST /a2a` without a session: by task id, or by `metadata["shrooms/session"]`
   * (`SESSION` or `MACHINE/SESSION`). A session that metadata places on another machine than
   * `machine` is refused (SESSION_NOT_FOUND), never taken for this machine's session of that name.
   * A task id that names another machine needs no check here: its key is refused (`keyOf`, TASK_NOT_FOUND).
   */
  static sessionFromParams(params: unknown, machine: string): string | undefined {
    const p = looseParams(params);
    const id = p.id ?? p.message?.taskId;
    if (typeof id === 'string') return parseTaskName(id)?.session;
    const s = p.metadata?.[META.session] ?? p.message?.metadata?.[META.session];
    const agent = typeof s === 'string' ? parseAgent(s) : undefined;
    if (agent?.machine !== undefined && agent.machine !== machine)
      throw new ShroomsError(
        'SESSION_NOT_FOUND',
        `${agent.machine}/${agent.session} is on ${agent.machine}, not on this machine (${machine}): send to ${agent.machine}'s gateway`,
      );
    return agent?.session;
  }
}

/** The message with other metadata (none when empty), the rest unchanged. */
function withMetadata(m: Message, metadata: Metadata | undefined): Message {
  if (m.metadata === metadata) return m;
  const { metadata: _dropped, ...rest } = m;
  return metadata && Object.keys(metadata).length ? { ...rest, metadata } : rest;
}

/** The caller as the claim `from` speaks for it (a proven occurrence's: its schedule owner's), or as no session. */
function claiming(caller: Caller, from: unknown): Caller {
  const { from: _claimed, ...device } = caller;
  return typeof from === 'string' ? { ...device, from } : device;
}
