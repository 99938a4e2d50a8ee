/**
 * Taking a message into the ledger: a new task, a resend of one, or an answer to a blocked one.
 * Shared by the bridge (the normal path) and the gateway (when the session's bridge is down, so the
 * task waits in the ledger and the bridge takes it up when it starts).
 */
import { randomUUID } from 'node:crypto';
import {
  META,
  ShroomsError,
  formatTaskId,
  parseTaskName,
  type DeliverRequest,
  type Message,
  type Metadata,
  withFields,
} from '@shrooms/protocol';
import type { Stored } from './entry.js';
import type { Ledger } from './ledger.js';
import { answer, newStarted, newTask } from './transitions.js';

/** Request metadata that the task keeps (everything under `shrooms/`, plus what the sender set). */
function taskMetadata(req: DeliverRequest): Metadata {
  const md: Metadata = withFields(req.message.metadata ?? {}, req.metadata);
  md[META.session] = req.session;
  md[META.machine] = req.machine;
  md[META.device] = req.origin.device;
  if (req.origin.from) md[META.from] = req.origin.from;
  else delete md[META.from];
  return md;
}

export interface IntakeResult {
  stored: Stored;
  /** True for a new task, false for a resend or an answer. */
  created: boolean;
  answered: boolean;
}

export function localTaskKey(ledger: Ledger, machine: string, session: string, taskId: string): string {
  const name = parseTaskName(taskId);
  if (!name || name.session !== session || (name.machine !== undefined && name.machine !== machine)) {
    throw new ShroomsError('TASK_NOT_FOUND', `no task ${taskId} on ${machine}/${session}`);
  }
  return ledger.key(machine, session, name.messageId);
}

/**
 * `queued`: the task waits behind others (`shrooms/queued`). `start`: the session is free, so a new
 * task is stored already WORKING — create and start in one write (its bridge then runs its turn).
 * `hold`: a new task's create may wait `ms` and go with its next change (Ledger.deferCreate); the
 * result's revision is then 0.
 */
export async function intake(
  ledger: Ledger,
  req: DeliverRequest,
  opts: { queued: boolean; start?: boolean; now?: Date; hold?: { ms: number; onError: (err: unknown) => void } },
): Promise<IntakeResult> {
  const now = opts.now ?? new Date();
  if (req.taskId) {
    const key = localTaskKey(ledger, req.machine, req.session, req.taskId);
    const existing = await ledger.get(key);
    if (!existing) throw new ShroomsError('TASK_NOT_FOUND', `no task ${req.taskId}`);
    if (req.message.contextId && req.message.contextId !== existing.entry.task.contextId) {
      throw new ShroomsError('INVALID_PARAMS', `contextId ${req.message.contextId} does not match task ${req.taskId}`);
    }
    // A resend of the answer (same message id already in the history) returns the task as it is.
    if (existing.entry.task.history?.some((m) => m.messageId === req.message.messageId)) {
      return { stored: existing, created: false, answered: false };
    }
    const stored = await ledger.transition(key, (cur) => answer(cur, req.message, now));
    return { stored, created: false, answered: true };
  }

  const messageId = req.message.messageId;
  const key = ledger.key(req.machine, req.session, messageId);
  const id = formatTaskId(req.session, messageId);
  const asked = { id, contextId: req.message.contextId ?? randomUUID(), message: req.message, metadata: taskMetadata(req), now };
  const entry = opts.start ? newStarted(asked) : newTask(withFields(asked, { queued: opts.queued }));
  const created = opts.hold ? await ledger.deferCreate(key, entry, opts.hold.ms, opts.hold.onError) : await ledger.create(key, entry);
  if (created) return { stored: created, created: true, answered: false };

  // Refused as existing: a replica that has not seen the create yet must not answer "nothing".
  const existing = await ledger.get(key, { atLeast: 1 });
  if (!existing) throw new ShroomsError('INTERNAL', `task ${id} vanished while it was being created; retry`);
  assertResend(existing, req.message, req.origin.device);
  return { stored: existing, created: false, answered: false };
}

/**
 * Refuses to take `message` from `device` as a resend of the stored task its id names when it is
 * none: the task was asked by another device, or the id is reused for other content (the A2A TCK
 * does this) — answering with a task about something else would mislead. The gateway asks this of
 * a task it knows; the intake of one whose two sends raced.
 */
export function assertResend(existing: Stored, message: Message, device: string): void {
  const task = existing.entry.task;
  if (task.metadata?.[META.device] !== device) {
    throw new ShroomsError('MESSAGE_ID_CONFLICT', `message id ${message.messageId} already names a task asked by another device`, {
      taskId: task.id,
    });
  }
  const first = task.history?.find((m) => m.messageId === message.messageId);
  if (first && JSON.stringify(first.parts) !== JSON.stringify(message.parts)) {
    throw new ShroomsError(
      'MESSAGE_ID_CONFLICT',
      `message id ${message.messageId} already names a task with other content; use a new message id`,
      { taskId: task.id },
    );
  }
}
