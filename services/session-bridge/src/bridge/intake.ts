/**
 * Taking a message in: a new task (within the session's room) or an answer to an open one, written
 * to the ledger and taken into the view; a new task's span begins here so its trace starts at the
 * bridge.
 */
import { META, type DeliverRequest } from '@shrooms/protocol';
import { intake, type IntakeResult } from '@shrooms/ledger';
import type { Core } from './core.js';

/** Run under the lock. */
export async function takeIn(c: Core, req: DeliverRequest): Promise<IntakeResult> {
  const isNew = !req.taskId;
  if (isNew)
    c.view.checkRoom(`${c.machine}/${c.session}`, { queueLength: c.config.LIMIT_QUEUE_LENGTH, openTasks: c.config.LIMIT_OPEN_TASKS });
  const key = isNew ? c.ledger.key(c.machine, c.session, req.message.messageId) : '';
  if (isNew && !(await c.ledger.get(key))) {
    const traceparent = c.spans.begin(key, {
      taskId: `${c.session}:${req.message.messageId}`,
      session: `${c.machine}/${c.session}`,
      device: req.origin.device,
      from: req.origin.from,
      depth: Number(req.metadata[META.depth] ?? 0),
    });
    if (traceparent) req = { ...req, metadata: { ...req.metadata, [META.traceparent]: traceparent } };
  }
  const r = await intake(c.ledger, req, { queued: c.view.busy(c.harnessIdle()) || c.view.queued > 0 });
  if (!r.created && key) c.spans.discard(key);
  if (r.created || r.answered) c.view.track(r.stored);
  return r;
}
