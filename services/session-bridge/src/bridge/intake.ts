/**
 * Taking a message in: a new task (within the session's room) or an answer to an open one, written
 * to the ledger and taken into the view; a new task's span begins here so its trace starts at the
 * bridge.
 */
import { META, type DeliverRequest } from '@shrooms/protocol';
import { intake, type IntakeResult } from '@shrooms/ledger';
import type { Core } from './core.js';
import { takeUp } from './recovery.js';
import { startedTask } from './turns.js';

/**
 * Run under the lock. A new task for a free session (nothing current, nothing queued, the harness
 * idle, not held for its owner) is stored already WORKING and becomes the current task: `started`
 * tells the caller to run its turn. Otherwise it waits in the queue for the turn loop.
 */
export async function takeIn(c: Core, req: DeliverRequest): Promise<IntakeResult & { started: boolean }> {
  const isNew = !req.taskId;
  if (isNew)
    c.view.checkRoom(`${c.machine}/${c.session}`, { queueLength: c.config.LIMIT_QUEUE_LENGTH, openTasks: c.config.LIMIT_OPEN_TASKS });
  const key = isNew ? c.ledger.key(c.machine, c.session, req.message.messageId) : '';
  // The span is begun before the create, which tells a new task from a resend (no read first);
  // a resend's span is discarded below (the first delivery's span is the task's).
  if (isNew) {
    const traceparent = c.spans.begin(key, {
      taskId: `${c.session}:${req.message.messageId}`,
      session: `${c.machine}/${c.session}`,
      device: req.origin.device,
      from: req.origin.from,
      depth: Number(req.metadata[META.depth] ?? 0),
    });
    if (traceparent) req = { ...req, metadata: { ...req.metadata, [META.traceparent]: traceparent } };
  }
  const waits = c.view.busy(c.harnessIdle()) || c.view.queued > 0;
  const start = isNew && !waits && !c.stopping() && req.metadata[META.held] !== true;
  let r: IntakeResult;
  try {
    r = await intake(c.ledger, req, { queued: waits, start });
  } catch (err) {
    if (key) c.spans.discard(key);
    throw err;
  }
  if (key) {
    if (r.created) c.spans.taken(key);
    else c.spans.discard(key);
  }
  const started = start && r.created;
  if (started) startedTask(c, r.stored);
  else if (r.created || r.answered) c.view.track(r.stored);
  // A resend of a task the view does not run: its first create may have been stored although it
  // seemed to fail (recovery.ts takeUp).
  else takeUp(c, r.stored);
  return { ...r, started };
}
