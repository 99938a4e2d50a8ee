/**
 * The A2A methods, binding-neutral: each takes parsed params and returns a result or a stream.
 * The JSON-RPC and HTTP+JSON bindings both call `callMethod`.
 */
import {
  AckTaskParamsSchema,
  CancelTaskParamsSchema,
  GetTaskParamsSchema,
  ListTasksParamsSchema,
  SendMessageParamsSchema,
  ShroomsError,
  SubscribeToTaskParamsSchema,
  isTerminal,
  UpdateStatusSchema,
} from '@shrooms/protocol';
import { z as zod } from 'zod';
import type { Stored } from '@shrooms/ledger';
import { META, PartSchema, parseAgent } from '@shrooms/protocol';
import { SpanKind, contextFromTraceparent, inSpan, type Context } from '@shrooms/runtime';
import type { z } from 'zod';
import { authorize } from '../authz/rules.js';
import type { Caller } from '../tasks/caller.js';
import type { ClientGone } from '../tasks/live.js';
import type { TaskService } from '../tasks/service.js';
import type { ScheduleHook } from '../tasks/schedule.js';
import type { ScheduleClient } from '@shrooms/client';
import { CancelScheduleRequestSchema, CreateScheduleRequestSchema, ListSchedulesRequestSchema } from '@shrooms/protocol';
import { LONE_SURROGATE, validateMessage } from '../tasks/validate.js';
import { looseParams } from './params.js';
import { openTaskStream, type TaskStream } from './stream.js';

/** Our extension (not A2A): the worker finishes a task; only from its own machine and session. */
const UpdateTaskParamsSchema = zod
  .object({
    id: zod.string().min(1),
    status: UpdateStatusSchema,
    text: zod.string().max(64 * 1024),
    parts: zod.array(PartSchema).max(16).optional(),
  })
  .loose();
/** Our extension: a device's loop-guard window for the session, seen or reset by its owner. */
const GuardWindowParamsSchema = zod.object({ device: zod.string().min(1).max(200).optional(), reset: zod.boolean().optional() }).loose();
/** Our extension: the owner releases/rejects a held task or stops/resumes reminders. */
const ControlSessionParamsSchema = zod
  .object({ action: zod.enum(['release', 'reject', 'stop_reminders', 'resume_reminders']), id: zod.string().optional() })
  .loose();

export type MethodOutcome = { result: unknown } | { stream: TaskStream };

export interface MethodContext {
  tasks: TaskService;
  session: string;
  caller: Caller;
  /** The client's going away: a blocking wait ends with what it has then. */
  gone?: ClientGone;
  /** Trace context from the request's headers; a valid one wins over metadata. */
  parent?: Context;
  /** Hook for SendMessage metadata that asks for a schedule instead of a task. */
  schedule?: ScheduleHook;
  /** The scheduler's service, for the schedule methods (machine-level, no session). */
  schedules?: ScheduleClient;
}

/** Methods about the machine, not one session: `POST /a2a` serves them without a session. */
export const MACHINE_METHODS = new Set(['CreateSchedule', 'ListSchedules', 'CancelSchedule']);

function parse<S extends z.ZodType>(schema: S, params: unknown): z.infer<S> {
  const r = schema.safeParse(params ?? {});
  if (!r.success) {
    const first = r.error.issues[0]!;
    throw new ShroomsError('INVALID_PARAMS', `invalid params: ${first.path.join('.') || '(params)'}: ${first.message}`);
  }
  // A task id with a lone surrogate would reach the ledger as another task's key (see LONE_SURROGATE).
  const id = (r.data as { id?: unknown }).id;
  if (typeof id === 'string' && LONE_SURROGATE.test(id))
    throw new ShroomsError('TASK_NOT_FOUND', 'the task id contains a lone surrogate; no task has such an id');
  return r.data;
}

/** Runs one A2A method inside a server span (a child of the client's trace context, if any). */
export function callMethod(method: string, params: unknown, ctx: MethodContext): Promise<MethodOutcome> {
  const parent = ctx.parent ?? traceContextOf(params);
  const attributes = {
    'a2a.method': method.slice(0, 64),
    'shrooms.session': ctx.session,
    'shrooms.device': ctx.caller.device,
    ...(ctx.caller.from ? { 'shrooms.from': ctx.caller.from } : {}),
  };
  return inSpan(`a2a ${method.slice(0, 64)}`, { parent, kind: SpanKind.SERVER, attributes }, () => dispatch(method, params, ctx));
}

/** A trace context the sender put in the task metadata (the MCP tools do), when no header carried one. */
function traceContextOf(params: unknown): Context | undefined {
  const p = looseParams(params);
  const tp = p.metadata?.[META.traceparent] ?? p.message?.metadata?.[META.traceparent];
  return tp ? contextFromTraceparent(tp) : undefined;
}

async function dispatch(method: string, params: unknown, ctx: MethodContext): Promise<MethodOutcome> {
  const { tasks, session, caller } = ctx;
  switch (method) {
    case 'CreateSchedule':
    case 'ListSchedules':
    case 'CancelSchedule':
      return { result: await scheduleMethod(method, params, ctx) };
    case 'SendMessage': {
      const p = parse(SendMessageParamsSchema, params);
      await tasks.requireSession(session);
      const scheduled = ctx.schedule ? await ctx.schedule(p, { machine: tasks.machine, session, caller }) : undefined;
      if (scheduled !== undefined) return { result: { task: scheduled } };
      return { result: { task: await tasks.send(session, p, caller, ctx.gone) } };
    }
    case 'SendStreamingMessage': {
      const p = parse(SendMessageParamsSchema, params);
      await tasks.requireSession(session);
      const key = p.message.taskId
        ? tasks.keyOf(session, p.message.taskId)
        : tasks.d.ledger.key(tasks.machine, session, p.message.messageId);
      const stream = openTaskStream(tasks.d.live, key, async () => (await tasks.submit(session, p, caller)).stored);
      return { stream };
    }
    case 'GetTask': {
      const p = parse(GetTaskParamsSchema, params);
      return { result: await tasks.get(session, p.id, caller, p.historyLength) };
    }
    case 'ListTasks': {
      const p = parse(ListTasksParamsSchema, params);
      await tasks.requireSession(session);
      return { result: await tasks.list(session, p, caller) };
    }
    case 'CancelTask': {
      const p = parse(CancelTaskParamsSchema, params);
      const why = p.metadata?.[META.cancelReason];
      return { result: await tasks.cancel(session, p.id, caller, typeof why === 'string' ? why.slice(0, 300) : undefined) };
    }
    case 'SubscribeToTask': {
      const p = parse(SubscribeToTaskParamsSchema, params);
      const cur = await tasks.read(session, p.id, caller);
      const key = cur.key;
      if (isTerminal(cur.entry.task.status.state)) {
        throw new ShroomsError('UNSUPPORTED_OPERATION', `task ${p.id} is ${cur.entry.task.status.state}; there is nothing to subscribe to`);
      }
      const stream = openTaskStream(tasks.d.live, key, async () => (await tasks.d.ledger.get(key)) as Stored, true);
      return { stream };
    }
    case 'AckTask': {
      const p = parse(AckTaskParamsSchema, params);
      return { result: await tasks.ack(session, p.id, caller) };
    }
    case 'UpdateTask': {
      const p = parse(UpdateTaskParamsSchema, params);
      if (p.parts) validateMessage({ messageId: 'update', role: 'ROLE_AGENT', parts: p.parts }, tasks.d.limits);
      return { result: await tasks.workerUpdate(session, p.id, p.status, p.text, caller, p.parts) };
    }
    case 'GuardWindow': {
      // Our extension: the owner sees (and with reset: true empties) a device's loop-guard window.
      const p = parse(GuardWindowParamsSchema, params);
      return { result: await tasks.guardWindow(session, caller, p.device, p.reset) };
    }
    case 'ControlSession': {
      const p = parse(ControlSessionParamsSchema, params);
      // A session that does not exist is not found, not "its bridge is unavailable" (a retryable 503).
      await tasks.requireSession(session);
      return { result: await tasks.control(session, p.action, p.id, caller) };
    }
    case 'CreateTaskPushNotificationConfig':
    case 'GetTaskPushNotificationConfig':
    case 'ListTaskPushNotificationConfigs':
    case 'DeleteTaskPushNotificationConfig':
      throw new ShroomsError('PUSH_NOT_SUPPORTED', 'push notifications are not supported; use SendStreamingMessage or SubscribeToTask');
    case 'GetExtendedAgentCard':
      // The card declares `capabilities.extendedAgentCard: false`; spec §1.4: UnsupportedOperation.
      throw new ShroomsError('UNSUPPORTED_OPERATION', 'this agent declares no extended card (capabilities.extendedAgentCard is false)');
    default:
      throw new ShroomsError('METHOD_NOT_FOUND', `unknown method ${JSON.stringify(String(method).slice(0, 100))}`);
  }
}

/**
 * Schedules through the gateway (our extension), so tools and people need only HTTP: the owner is
 * the verified device and the claimed session, whatever the request says.
 */
async function scheduleMethod(method: string, params: unknown, ctx: MethodContext): Promise<unknown> {
  // A schedule asks for tasks (`send`); listing them is a read. Who may cancel one is decided by the
  // scheduler, which holds the schedule (its owner's device or a recipient's machine).
  if (method !== 'CancelSchedule') authorize(method === 'CreateSchedule' ? 'send' : 'read', ctx.caller, { machine: ctx.tasks.machine });
  if (!ctx.schedules)
    throw new ShroomsError('SCHEDULER_UNAVAILABLE', 'the scheduler is not running (this gateway has no scheduler client)');
  // The device is the verified one; the session may be claimed in metadata or in `origin.from`.
  const raw = (params ?? {}) as Record<string, unknown> & { origin?: { from?: unknown } };
  const claimed = ctx.caller.from ?? (typeof raw.origin?.from === 'string' && parseAgent(raw.origin.from) ? raw.origin.from : undefined);
  const origin = { device: ctx.caller.device, ...(claimed ? { from: claimed } : {}) };
  const p = { ...raw, origin };
  try {
    if (method === 'CreateSchedule') {
      const req = CreateScheduleRequestSchema.parse(p);
      // A recipient of this machine must be a session now, as for an ask (and for a schedule asked
      // as SendMessage): a name mistyped would otherwise be refused only when it fires, days later.
      // Other machines' sessions are their gateways' to know; a refusal there is shown under the schedule.
      for (const r of req.recipients) {
        const agent = parseAgent(r)!;
        if (agent.machine === ctx.tasks.machine) await ctx.tasks.requireSession(agent.session);
      }
      return await ctx.schedules.create(req);
    }
    if (method === 'ListSchedules') return await ctx.schedules.list(ListSchedulesRequestSchema.parse(p));
    return { schedule: await ctx.schedules.cancel(CancelScheduleRequestSchema.parse(p)) };
  } catch (err) {
    if (err && typeof err === 'object' && 'issues' in err)
      throw new ShroomsError('INVALID_PARAMS', `invalid params: ${(err as unknown as Error).message.slice(0, 300)}`);
    throw err;
  }
}

export const STREAMING_METHODS = new Set(['SendStreamingMessage', 'SubscribeToTask']);
