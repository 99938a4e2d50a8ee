/**
 * The one client of the mesh, used by the MCP tools and by `shrooms-agent a2a`: finds where a target
 * lives, speaks standard A2A to that machine's gateway, and says who is asking (`shrooms/from`),
 * from inside which task (`shrooms/parent`) and in which trace (`shrooms/traceparent`).
 *
 * Over 300 lines because it is the one client: every method a tool or the CLI calls, each short,
 * shares the target, sender and trace resolution at the top; split, each part would need all of it.
 */
import {
  META,
  ShroomsError,
  isTerminal,
  type ListTasksResult,
  type Metadata,
  type Part,
  type StreamResponse,
  type Task,
  type TaskState,
  type UpdateStatus,
} from '@shrooms/protocol';
import { AgentsReplySchema, gatewayFor, resolveTarget, toAgentInfo, type AgentInfo } from './agents.js';
import { namingTask, normalizeError } from './errors.js';
import { GatewayWire, guarded } from './http.js';
import { DEFAULT_GATEWAY_URL, isTraceparent, type ClientOptions } from './options.js';
import { agentRef, newMessageId, parseAgentName, parseTaskRef, type AgentRef, type TaskRef } from './refs.js';
import { whyQueued } from './queued.js';
import { ScheduleViewSchema, firstAt, gatewayScheduler, type ScheduleView, type SchedulerPort } from './schedules.js';
import type { TaskSummary } from './summary.js';
import { waitForTask, type WaitOptions, type WaitResult } from './wait.js';

/** The SDK's message types, loaded with the first call that speaks A2A (as `http.ts` loads its client). */
const sdk = () => import('@a2a-js/sdk');

export interface Target extends AgentRef {
  gatewayUrl: string;
}

export interface SendInput {
  /** `MACHINE/SESSION`, `SESSION`, or a name `listAgents` shows. Optional with `task`. */
  to?: string;
  text: string;
  /** Answer to a blocked task (`MACHINE/SESSION:ID` or `SESSION:ID`). */
  task?: string;
  /** The sender's message id (a resend with the same id is the same task). Default: fresh. */
  messageId?: string;
  /** Extra request metadata (merged under ours). */
  metadata?: Metadata;
  /** Prefix of generated message ids (default `cli`). */
  idPrefix?: string;
}

export interface Sent {
  task: Task;
  ref: TaskRef;
}

export interface ListInput {
  state?: TaskState;
  pageSize?: number;
  pageToken?: string;
  historyLength?: number;
  includeArtifacts?: boolean;
}

export interface ScheduleInput {
  /** Recipients, each as `to` in `send`. */
  to: string[];
  text: string;
  /** Local date-time with `zone`, an instant with offset, or `2026-10-12T08:00[Europe/Berlin]`. */
  at?: string;
  /** Instead of `at`: how long from now (`10m`, `1h30m`, `2d`; parseDelay), for the first occurrence. */
  in?: string;
  zone?: string;
  /** Short form (`daily`, `weekly:mon,fri`, `every 15m;count=4`) or the scheduler's object. */
  repeat?: string | Record<string, unknown>;
  /** Send each result back to the asker (needs SHROOMS_AGENT_SESSION) or to this `MACHINE/SESSION`. */
  replyTo?: boolean | string;
  /** Caller-chosen schedule id (creating it again returns the existing one). */
  id?: string;
}

export class ShroomsClient {
  readonly gatewayUrl: string;
  private readonly wire: GatewayWire;
  private machineName?: Promise<string>;
  private schedulerPort?: SchedulerPort;

  constructor(
    readonly options: ClientOptions = {},
    scheduler?: SchedulerPort,
  ) {
    this.gatewayUrl = (options.gatewayUrl ?? DEFAULT_GATEWAY_URL).replace(/\/$/, '');
    this.wire = new GatewayWire({ fetch: options.fetch, requestTimeoutMs: options.requestTimeoutMs ?? 30_000 });
    this.schedulerPort = scheduler;
    if (options.machine) this.machineName = Promise.resolve(options.machine);
  }

  // ---- who and where ------------------------------------------------------------------------------

  /** This machine's name: configured, or the name on the local gateway's machine card. */
  machine(): Promise<string> {
    this.machineName ??= (async () => {
      const card = (await this.wire.getJson(`${this.gatewayUrl}/.well-known/agent-card.json`)) as { name?: unknown };
      if (typeof card?.name !== 'string' || !card.name)
        throw new ShroomsError('INVALID_AGENT_RESPONSE', `the machine card at ${this.gatewayUrl} has no name`);
      return card.name;
    })();
    const p = this.machineName;
    p.catch(() => {
      if (this.machineName === p) this.machineName = undefined;
    });
    return p;
  }

  /** Who is asking, as `MACHINE/SESSION`, or undefined for a person at a shell. */
  async from(): Promise<string | undefined> {
    if (!this.options.as) return undefined;
    const a = parseAgentName(this.options.as);
    return `${a.machine ?? (await this.machine())}/${a.session}`;
  }

  async listAgents(): Promise<AgentInfo[]> {
    const body = AgentsReplySchema.safeParse(await this.wire.getJson(`${this.gatewayUrl}/agents`));
    if (!body.success) throw new ShroomsError('INVALID_AGENT_RESPONSE', `${this.gatewayUrl}/agents did not list agents`);
    return body.data.agents.map(toAgentInfo).filter((a): a is AgentInfo => a !== undefined);
  }

  /**
   * A queued task's summary with what it waits for (`note`, from the worker's signal); any other
   * summary, or one whose listing fails, as it was: a hint is never worth an error.
   */
  async explain(s: TaskSummary): Promise<TaskSummary> {
    if (s.status !== 'queued' || s.note) return s;
    const note = whyQueued(s, await this.listAgents().catch(() => []));
    return note ? { ...s, note } : s;
  }

  /** Where a target lives and which gateway serves it. */
  async resolve(target: string): Promise<Target> {
    const local = await this.machine();
    const parsed = parseAgentName(target);
    const needAgents = !parsed.machine || parsed.machine !== local;
    const agents = needAgents ? await this.listAgents() : [];
    const ref = resolveTarget(target, local, agents);
    return {
      ...ref,
      gatewayUrl: gatewayFor(ref.machine, ref.session, {
        local,
        localUrl: this.gatewayUrl,
        agents,
        staticMap: this.options.gateways ?? {},
      }),
    };
  }

  async taskRef(name: string): Promise<TaskRef> {
    return parseTaskRef(name, await this.machine());
  }

  private async gatewayOfTask(ref: TaskRef): Promise<string> {
    const local = await this.machine();
    if (ref.machine === local) return this.gatewayUrl;
    const agents = await this.listAgents();
    return gatewayFor(ref.machine, ref.session, { local, localUrl: this.gatewayUrl, agents, staticMap: this.options.gateways ?? {} });
  }

  /** The task the asker works on now, as a whole name, if any. */
  async parentTask(): Promise<string | undefined> {
    const cur = this.options.currentTask?.();
    if (!cur) return undefined;
    return (await this.taskRef(cur)).task;
  }

  /**
   * The trace the ask belongs to: the hook (OpenTelemetry's, later), else the parent task's own
   * `shrooms/traceparent` from the ledger. Undefined when there is none (a new trace starts).
   */
  async traceparent(parent?: string): Promise<string | undefined> {
    const hooked = this.options.traceparent?.();
    if (isTraceparent(hooked)) return hooked;
    if (!parent) return undefined;
    try {
      const t = await this.get(parent, { historyLength: 0 });
      const tp = t.metadata?.[META.traceparent];
      return isTraceparent(tp) ? tp : undefined;
    } catch {
      return undefined;
    }
  }

  /** Metadata every request carries: who asks, from inside which task, in which trace. */
  async askMetadata(): Promise<{ metadata: Metadata; headers: Record<string, string> }> {
    const from = await this.from();
    const parent = await this.parentTask();
    const tp = await this.traceparent(parent);
    const metadata: Metadata = {};
    if (from) metadata[META.from] = from;
    if (parent) metadata[META.parent] = parent;
    if (tp) metadata[META.traceparent] = tp;
    return { metadata, headers: tp ? { traceparent: tp } : {} };
  }

  // ---- A2A ---------------------------------------------------------------------------------------

  /** SendMessage that returns at once (`returnImmediately`); follow the task with `wait`. */
  async send(input: SendInput): Promise<Sent> {
    let target: Target;
    let taskId: string | undefined;
    if (input.task) {
      const ref = await this.taskRef(input.task);
      if (input.to) {
        const to = await this.resolve(input.to);
        if (to.name !== ref.name) throw new ShroomsError('INVALID_PARAMS', `task ${ref.task} belongs to ${ref.name}, not ${to.name}`);
      }
      target = { ...agentRef(ref.machine, ref.session), gatewayUrl: await this.gatewayOfTask(ref) };
      taskId = ref.id;
    } else {
      if (!input.to)
        throw new ShroomsError('INVALID_PARAMS', 'say who to ask (MACHINE/SESSION or SESSION), or which blocked task to answer');
      target = await this.resolve(input.to);
    }
    const { metadata, headers } = await this.askMetadata();
    const md = { ...input.metadata, ...metadata };
    const messageId = input.messageId ?? newMessageId(input.idPrefix ?? 'cli');
    const { SendMessageRequest, Task: SdkTask } = await sdk();
    const req = SendMessageRequest.fromJSON({
      message: { messageId, role: 'ROLE_USER', parts: [{ text: input.text }], ...(taskId ? { taskId } : {}) },
      configuration: { returnImmediately: true },
      metadata: md,
    });
    // The session's card, then the send: either says SESSION_NOT_FOUND for a session that is not there.
    const res = await (async () => {
      const client = await this.wire.a2a(target.gatewayUrl, target.session);
      return guarded(target.gatewayUrl, () => client.sendMessage(req, { serviceParameters: headers, signal: this.wire.quick() }));
    })().catch(async (err: unknown) => {
      throw err instanceof ShroomsError && err.key === 'SESSION_NOT_FOUND' ? await this.withSessions(err) : err;
    });
    if (!('status' in res) || !('id' in res))
      throw new ShroomsError('INVALID_AGENT_RESPONSE', `${target.name} answered with a message, not a task`);
    const task = SdkTask.toJSON(res) as Task;
    return { task, ref: parseTaskRef(task.id, target.machine) };
  }

  /** A session that is not there, with the sessions that are: most often a name mistyped. */
  private async withSessions(err: ShroomsError): Promise<ShroomsError> {
    const names = (await this.listAgents().catch(() => [])).filter((a) => a.state !== 'stopped').map((a) => a.name);
    const now = names.length ? `sessions now: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''}` : 'no session runs now';
    return new ShroomsError(err.key, `${err.message} (${now})`, err.details);
  }

  /** Send, then follow the task until it is finished or needs input, or `timeoutMs` passes. */
  async ask(input: SendInput, wait: WaitOptions = {}): Promise<WaitResult & { ref: TaskRef }> {
    const sent = await this.send(input);
    const r = await this.wait(sent.ref.task, wait, sent.task);
    return { ...r, ref: sent.ref };
  }

  async get(name: string, opts: { historyLength?: number; signal?: AbortSignal } = {}): Promise<Task> {
    const ref = await this.taskRef(name);
    const gw = await this.gatewayOfTask(ref);
    const client = await this.wire.a2a(gw, ref.session);
    const { GetTaskRequest, Task: SdkTask } = await sdk();
    const req = GetTaskRequest.fromJSON({ id: ref.id, ...(opts.historyLength !== undefined ? { historyLength: opts.historyLength } : {}) });
    return SdkTask.toJSON(await guarded(gw, () => client.getTask(req, { signal: this.wire.quick(opts.signal) }))) as Task;
  }

  /** Follows a task (see wait.ts); `initial` saves the first read when the caller has it. */
  async wait(name: string, opts: WaitOptions = {}, initial?: Task): Promise<WaitResult> {
    const ref = await this.taskRef(name);
    try {
      return await this.follow(ref, opts, initial);
    } catch (e) {
      throw namingTask(e, ref.task);
    }
  }

  private async follow(ref: TaskRef, opts: WaitOptions, initial?: Task): Promise<WaitResult> {
    const gw = await this.gatewayOfTask(ref);
    const client = await this.wire.a2a(gw, ref.session);
    const get = () => this.get(ref.task, { signal: opts.signal });
    const subscribe = (signal: AbortSignal): AsyncIterable<StreamResponse> => ({
      async *[Symbol.asyncIterator]() {
        const { SubscribeToTaskRequest, StreamResponse: SdkStreamResponse } = await sdk();
        const stream = client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: ref.id }), { signal });
        for await (const ev of stream) yield SdkStreamResponse.toJSON(ev) as StreamResponse;
      },
    });
    return waitForTask({ get, subscribe }, opts, initial);
  }

  /** The task's events as they happen (the current task first), until it closes or `signal` aborts. */
  async *subscribe(name: string, signal?: AbortSignal): AsyncGenerator<StreamResponse> {
    const ref = await this.taskRef(name);
    const gw = await this.gatewayOfTask(ref);
    const client = await this.wire.a2a(gw, ref.session);
    const { SubscribeToTaskRequest, StreamResponse: SdkStreamResponse } = await sdk();
    try {
      for await (const ev of client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: ref.id }), { signal })) {
        yield SdkStreamResponse.toJSON(ev) as StreamResponse;
      }
    } catch (e) {
      throw normalizeError(e, gw);
    }
  }

  /** `why`: the cause to keep on the task (`shrooms/cancel_reason`), e.g. that its parent was canceled. */
  async cancel(name: string, opts: { why?: string } = {}): Promise<Task> {
    const ref = await this.taskRef(name);
    const gw = await this.gatewayOfTask(ref);
    const client = await this.wire.a2a(gw, ref.session);
    const { metadata, headers } = await this.askMetadata();
    if (opts.why) metadata[META.cancelReason] = opts.why;
    const { CancelTaskRequest, Task: SdkTask } = await sdk();
    const req = CancelTaskRequest.fromJSON({ id: ref.id, metadata });
    return SdkTask.toJSON(
      await guarded(gw, () => client.cancelTask(req, { serviceParameters: headers, signal: this.wire.quick() })),
    ) as Task;
  }

  /** ListTasks of one session, newest first. */
  async list(agent: string, q: ListInput = {}): Promise<ListTasksResult & { agent: Target }> {
    const target = await this.resolve(agent);
    const client = await this.wire.a2a(target.gatewayUrl, target.session);
    const { ListTasksRequest, ListTasksResponse } = await sdk();
    const req = ListTasksRequest.fromJSON({
      ...(q.state ? { status: q.state } : {}),
      ...(q.pageSize !== undefined ? { pageSize: q.pageSize } : {}),
      ...(q.pageToken ? { pageToken: q.pageToken } : {}),
      ...(q.historyLength !== undefined ? { historyLength: q.historyLength } : {}),
      ...(q.includeArtifacts !== undefined ? { includeArtifacts: q.includeArtifacts } : {}),
    });
    const res = ListTasksResponse.toJSON(
      await guarded(target.gatewayUrl, () => client.listTasks(req, { signal: this.wire.quick() })),
    ) as Partial<ListTasksResult>;
    return {
      tasks: res.tasks ?? [],
      nextPageToken: res.nextPageToken ?? '',
      pageSize: res.pageSize ?? 0,
      totalSize: res.totalSize ?? 0,
      agent: target,
    };
  }

  // ---- the task extension and our own methods (plain JSON-RPC) -----------------------------------

  /** AckTask: the asker has read the answer (bookkeeping; never closes or reopens a task). */
  async ack(name: string): Promise<Task> {
    const ref = await this.taskRef(name);
    const gw = await this.gatewayOfTask(ref);
    const { metadata, headers } = await this.askMetadata();
    return (await this.wire.rpc(gw, ref.session, 'AckTask', { id: ref.id, metadata }, headers)) as Task;
  }

  /**
   * UpdateTask, the worker's `task_update`: only for a task of the asking session on this machine.
   * Checked here first for a clear message; the gateway checks it again (`check: false` skips ours).
   */
  /** `opts.parts`: files and data returned with `done`, beside the summary in its artifact. */
  async update(name: string, status: UpdateStatus, text: string, opts: { check?: boolean; parts?: Part[] } = {}): Promise<Task> {
    const ref = await this.taskRef(name);
    const from = await this.from();
    if (opts.check !== false) {
      const local = await this.machine();
      if (!from) {
        throw new ShroomsError(
          'UPDATE_FORBIDDEN',
          `only the worker session may update ${ref.task}, and this caller names no session (set SHROOMS_AGENT_SESSION)`,
        );
      }
      if (ref.machine !== local || from !== ref.name) {
        throw new ShroomsError(
          'UPDATE_FORBIDDEN',
          `${ref.task} is a task of ${ref.name}; ${from} may only update its own tasks on ${local}`,
        );
      }
    }
    const md: Metadata = from ? { [META.from]: from } : {};
    return (await this.wire.rpc(this.gatewayUrl, ref.session, 'UpdateTask', {
      id: ref.id,
      status,
      text,
      metadata: md,
      ...(opts.parts ? { parts: opts.parts } : {}),
    })) as Task;
  }

  /** GuardWindow: a device's loop-guard window for a session (default: this device), `reset` empties it. */
  async guardWindow(agent: string, opts: { device?: string; reset?: boolean } = {}): Promise<Record<string, unknown>> {
    const target = await this.resolve(agent);
    const { metadata } = await this.askMetadata();
    return (await this.wire.rpc(target.gatewayUrl, target.session, 'GuardWindow', { ...opts, metadata })) as Record<string, unknown>;
  }

  /** ControlSession: the owner releases/rejects a held task or stops/resumes reminders. */
  async control(agent: string, action: 'release' | 'reject' | 'stop_reminders' | 'resume_reminders', task?: string): Promise<unknown> {
    const target = await this.resolve(agent);
    const id = task ? (await this.taskRef(task)).id : undefined;
    const { metadata } = await this.askMetadata();
    return this.wire.rpc(target.gatewayUrl, target.session, 'ControlSession', { action, ...(id ? { id } : {}), metadata });
  }

  // ---- schedules (the scheduler's NATS service) --------------------------------------------------

  private scheduler(): SchedulerPort {
    this.schedulerPort ??= gatewayScheduler((method, params) => this.wire.rpcMachine(this.gatewayUrl, method, params));
    return this.schedulerPort;
  }

  private async origin(): Promise<{ device: string; from?: string }> {
    const from = await this.from();
    return { device: await this.machine(), ...(from ? { from } : {}) };
  }

  async createSchedule(input: ScheduleInput): Promise<{ schedule: ScheduleView; created: boolean }> {
    if (input.to.length === 0) throw new ShroomsError('INVALID_PARAMS', 'a schedule needs at least one recipient');
    const when = firstAt(input);
    const recipients = await Promise.all(input.to.map(async (t) => (await this.resolve(t)).name));
    let replyTo: string | undefined;
    if (input.replyTo === true) {
      replyTo = await this.from();
      if (!replyTo)
        throw new ShroomsError('INVALID_PARAMS', 'results can go back only to a session: set SHROOMS_AGENT_SESSION, or name one');
    } else if (typeof input.replyTo === 'string') {
      replyTo = (await this.resolve(input.replyTo)).name;
    }
    const res = await this.scheduler().request('create', {
      ...(input.id ? { id: input.id } : {}),
      recipients,
      prompt: input.text,
      ...when,
      ...(input.repeat ? { repeat: input.repeat } : {}),
      origin: await this.origin(),
      ...(replyTo ? { replyTo } : {}),
    });
    return { schedule: ScheduleViewSchema.parse(res.schedule), created: res.created === true };
  }

  async listSchedules(
    q: { id?: string; recipient?: string; all?: boolean; mine?: boolean; limit?: number } = {},
  ): Promise<{ schedules: ScheduleView[]; total: number }> {
    const from = q.mine ? await this.from() : undefined;
    const res = await this.scheduler().request('list', {
      ...(q.id ? { id: q.id } : {}),
      ...(q.recipient ? { recipient: (await this.resolve(q.recipient)).name } : {}),
      ...(from ? { from } : {}),
      state: q.all ? 'all' : 'active',
      ...(q.limit ? { limit: q.limit } : {}),
    });
    const list = Array.isArray(res.schedules) ? res.schedules : [];
    return { schedules: list.map((s) => ScheduleViewSchema.parse(s)), total: typeof res.total === 'number' ? res.total : list.length };
  }

  async cancelSchedule(id: string): Promise<ScheduleView> {
    const res = await this.scheduler().request('cancel', { id, origin: await this.origin() });
    return ScheduleViewSchema.parse(res.schedule);
  }

  /** Closes what the client opened (a NATS connection to the scheduler, if any). */
  async close(): Promise<void> {
    await this.schedulerPort?.close();
  }
}

export const isFinished = (t: Task): boolean => isTerminal(t.status.state);
