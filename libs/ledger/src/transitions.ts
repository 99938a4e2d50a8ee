/**
 * How a task changes (spec §5), as pure functions over ledger entries. Each returns the next entry
 * with the A2A events the change produced, or throws a ShroomsError when the change is not allowed.
 * Terminal states are absorbing: only bookkeeping (ack) touches a finished task.
 *
 * Nothing here changes an object it was given: a change copies the task shallowly and replaces the
 * parts it changes (status, metadata, history, artifacts) with new ones, so the next entry shares
 * the rest with the one before (a deep copy of the history cost the bridge ~6 % of its CPU).
 */
import {
  META,
  ShroomsError,
  isTerminal,
  type Artifact,
  type Message,
  type Metadata,
  type Part,
  type StreamResponse,
  type Task,
  type TaskState,
  withFields,
} from '@shrooms/protocol';
import { merged, type LedgerEntry } from './entry.js';

export interface NewTaskInput {
  id: string;
  contextId: string;
  message: Message;
  metadata: Metadata;
  queued: boolean;
  now: Date;
}

const iso = (d: Date) => d.toISOString();

export function newTask(input: NewTaskInput): LedgerEntry {
  const metadata: Metadata = withFields(input.metadata, { [META.createdAt]: iso(input.now) });
  if (input.queued) metadata[META.queued] = true;
  const message: Message = withFields(input.message, { taskId: input.id, contextId: input.contextId });
  const task: Task = {
    id: input.id,
    contextId: input.contextId,
    status: { state: 'TASK_STATE_SUBMITTED', timestamp: iso(input.now) },
    history: [message],
    artifacts: [],
    metadata,
  };
  return { v: 1, task, events: [{ task: created(task) }] };
}

/**
 * The event of a task's creation: the task as a stream's first event names it (id, context, status)
 * and no more. Every stream sends the task whole as its first event, from its own read of the ledger,
 * and passes this one over; a whole copy here was a sixth or more of the value of a task asked and
 * finished in one write.
 */
function created(task: Task): Task {
  return { id: task.id, contextId: task.contextId, status: task.status };
}

/**
 * A new task its session starts at once (it was idle, nothing waited): asked and started in one
 * entry, as `start(newTask(…))` would leave it after two writes, with the events of both.
 */
export function newStarted(input: Omit<NewTaskInput, 'queued'>): LedgerEntry {
  const asked = newTask(withFields(input, { queued: false }));
  const started = start(asked, input.now);
  return merged(asked, started);
}

function next(entry: LedgerEntry, task: Task, events: StreamResponse[]): LedgerEntry {
  return { v: entry.v + 1, task, events };
}

function statusEvent(task: Task, metadata?: Metadata): StreamResponse {
  return { statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status, ...(metadata ? { metadata } : {}) } };
}

function assertOpen(task: Task, what: string): void {
  if (isTerminal(task.status.state)) {
    throw new ShroomsError('UNSUPPORTED_OPERATION', `task ${task.id} is ${task.status.state}; it cannot ${what}`);
  }
}

function agentMessage(task: Task, text: string, now: Date, suffix: string): Message {
  return {
    messageId: `${task.id}#${suffix}`,
    role: 'ROLE_AGENT',
    parts: [{ text }],
    taskId: task.id,
    contextId: task.contextId,
    metadata: { at: iso(now) },
  };
}

function withState(
  entry: LedgerEntry,
  state: TaskState,
  now: Date,
  opts: { message?: Message; metadata?: Metadata; drop?: string[] } = {},
): Task {
  const task = { ...entry.task };
  task.status = { state, timestamp: iso(now), ...(opts.message ? { message: opts.message } : {}) };
  task.metadata = withFields(task.metadata ?? {}, opts.metadata ?? {});
  for (const k of opts.drop ?? []) delete task.metadata[k];
  return task;
}

/**
 * The session takes the task up. A task taken up again (an answer to it, a restart) starts the
 * reminder ladder afresh: a stall mark or reminders left from before would keep the watchdog quiet
 * while the session sat on it (the hourly cap's log stays).
 */
export function start(entry: LedgerEntry, now: Date): LedgerEntry {
  assertOpen(entry.task, 'start');
  const task = withState(entry, 'TASK_STATE_WORKING', now, { drop: [META.queued, META.held, META.answer, ...LADDER_MARKS] });
  return next(entry, task, [statusEvent(task)]);
}

/** Where a task is on the reminder ladder. */
const LADDER_MARKS = [META.stalled, META.nudges, META.lastNudge];

export function markQueued(entry: LedgerEntry, queued: boolean): LedgerEntry | null {
  if (isTerminal(entry.task.status.state)) return null;
  const has = entry.task.metadata?.[META.queued] === true;
  if (has === queued) return null;
  const task = { ...entry.task };
  task.metadata = { ...task.metadata };
  if (queued) task.metadata[META.queued] = true;
  else delete task.metadata[META.queued];
  return next(entry, task, [statusEvent(task, { [META.queued]: queued })]);
}

/** `parts`: files and data the worker returns beside its summary, in the same artifact (alone when the summary is empty). */
export function complete(entry: LedgerEntry, summary: string, now: Date, parts: Part[] = []): LedgerEntry {
  assertOpen(entry.task, 'complete');
  const message = agentMessage(entry.task, summary, now, `done-${entry.v}`);
  const task = withState(entry, 'TASK_STATE_COMPLETED', now, { message, drop: [META.queued] });
  const artifact: Artifact = {
    artifactId: `${task.id}#summary`,
    name: 'summary',
    parts: summary === '' && parts.length > 0 ? parts : [{ text: summary }, ...parts],
  };
  task.artifacts = [...(task.artifacts ?? []), artifact];
  task.history = [...(task.history ?? []), message];
  return next(entry, task, [
    { artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact, lastChunk: true } },
    statusEvent(task),
  ]);
}

export function block(entry: LedgerEntry, need: string, now: Date, metadata: Metadata = {}): LedgerEntry {
  return interrupt(entry, 'TASK_STATE_INPUT_REQUIRED', need, now, metadata);
}

/**
 * The worker needs the asker to authorize something first (A2A §7.6.1): interrupted like `block`,
 * and answered the same way (`answer` takes it back into the queue).
 */
export function needAuth(entry: LedgerEntry, need: string, now: Date, metadata: Metadata = {}): LedgerEntry {
  return interrupt(entry, 'TASK_STATE_AUTH_REQUIRED', need, now, metadata);
}

function interrupt(
  entry: LedgerEntry,
  state: 'TASK_STATE_INPUT_REQUIRED' | 'TASK_STATE_AUTH_REQUIRED',
  need: string,
  now: Date,
  metadata: Metadata,
): LedgerEntry {
  const auth = state === 'TASK_STATE_AUTH_REQUIRED';
  assertOpen(entry.task, auth ? 'ask for authorization' : 'ask for input');
  const message = agentMessage(entry.task, need, now, `${auth ? 'auth' : 'blocked'}-${entry.v}`);
  const task = withState(entry, state, now, { message, metadata, drop: [META.queued] });
  task.history = [...(task.history ?? []), message];
  return next(entry, task, [statusEvent(task)]);
}

export function fail(entry: LedgerEntry, why: string, now: Date, metadata: Metadata = {}): LedgerEntry {
  assertOpen(entry.task, 'fail');
  const message = agentMessage(entry.task, why, now, `failed-${entry.v}`);
  const task = withState(entry, 'TASK_STATE_FAILED', now, { message, metadata, drop: [META.queued] });
  task.history = [...(task.history ?? []), message];
  return next(entry, task, [statusEvent(task)]);
}

export function reject(entry: LedgerEntry, why: string, now: Date): LedgerEntry {
  assertOpen(entry.task, 'be rejected');
  const message = agentMessage(entry.task, why, now, `rejected-${entry.v}`);
  const task = withState(entry, 'TASK_STATE_REJECTED', now, { message, drop: [META.queued, META.held] });
  return next(entry, task, [statusEvent(task)]);
}

/** Cancel is idempotent on a canceled task (returns null: no change) and refused on other finished ones. */
export function cancel(entry: LedgerEntry, by: string, now: Date, metadata: Metadata = {}): LedgerEntry | null {
  const state = entry.task.status.state;
  if (state === 'TASK_STATE_CANCELED') return null;
  if (isTerminal(state)) throw new ShroomsError('TASK_NOT_CANCELABLE', `task ${entry.task.id} is already ${state}`);
  const message = agentMessage(entry.task, `canceled by ${by}`, now, `canceled-${entry.v}`);
  const task = withState(entry, 'TASK_STATE_CANCELED', now, {
    message,
    metadata: { [META.canceledBy]: by, ...metadata },
    drop: [META.queued],
  });
  return next(entry, task, [statusEvent(task)]);
}

export function expire(entry: LedgerEntry, now: Date): LedgerEntry | null {
  if (isTerminal(entry.task.status.state)) return null;
  return cancel(entry, 'expiry', now, { [META.expired]: iso(now) });
}

/**
 * An answer to a blocked task: appended to its history; the task goes back to SUBMITTED (queued
 * until its session takes it up again, ahead of new tasks).
 */
export function answer(entry: LedgerEntry, message: Message, now: Date): LedgerEntry {
  const state = entry.task.status.state;
  if (isTerminal(state))
    throw new ShroomsError('UNSUPPORTED_OPERATION', `task ${entry.task.id} is ${state}; a finished task takes no more messages`);
  if (state !== 'TASK_STATE_INPUT_REQUIRED' && state !== 'TASK_STATE_AUTH_REQUIRED') {
    throw new ShroomsError('UNSUPPORTED_OPERATION', `task ${entry.task.id} is ${state}; only a task that needs input takes an answer`);
  }
  const msg: Message = withFields(message, { taskId: entry.task.id, contextId: entry.task.contextId });
  const task = withState(entry, 'TASK_STATE_SUBMITTED', now, { metadata: { [META.queued]: true, [META.answer]: msg.messageId } });
  task.history = [...(task.history ?? []), msg];
  return next(entry, task, [statusEvent(task)]);
}

/**
 * What the bridge says of a working task meanwhile (the model endpoint failing, a turn that ended
 * without `task_update`): the status message of the WORKING state, shown by GetTask, the dashboard
 * and the CLI. `''` takes it away; `metadata` is merged (the last worker line). Null (no change) unless
 * the task is WORKING and something differs.
 */
export function note(entry: LedgerEntry, text: string, now: Date, metadata: Metadata = {}): LedgerEntry | null {
  if (entry.task.status.state !== 'TASK_STATE_WORKING') return null;
  const had = entry.task.status.message?.parts?.[0];
  const cur = entry.task.metadata ?? {};
  const sameMeta = Object.entries(metadata).every(([k, v]) => JSON.stringify(cur[k]) === JSON.stringify(v));
  if ((had && 'text' in had ? had.text : '') === text && sameMeta) return null;
  const message = text ? agentMessage(entry.task, text, now, `note-${entry.v}`) : undefined;
  const task = withState(entry, 'TASK_STATE_WORKING', now, { ...(message ? { message } : {}), metadata });
  return next(entry, task, [statusEvent(task)]);
}

/** Metadata-only bookkeeping (ack, nudges, stalled, last worker line); allowed on any state. */
export function annotate(entry: LedgerEntry, metadata: Metadata, eventMetadata?: Metadata): LedgerEntry | null {
  const cur = entry.task.metadata ?? {};
  if (Object.entries(metadata).every(([k, v]) => JSON.stringify(cur[k]) === JSON.stringify(v))) return null;
  const task = { ...entry.task };
  task.metadata = withFields(cur, metadata);
  return next(entry, task, [statusEvent(task, eventMetadata ?? metadata)]);
}

/** The task as a reader asked for it: history trimmed, artifacts dropped if unwanted. */
export function view(task: Task, opts: { historyLength?: number; includeArtifacts?: boolean } = {}): Task {
  const out: Task = { ...task };
  if (opts.historyLength !== undefined) {
    const h = task.history ?? [];
    if (opts.historyLength === 0) delete out.history;
    else out.history = h.slice(-opts.historyLength);
  }
  if (opts.includeArtifacts === false) delete out.artifacts;
  return out;
}
