/**
 * A2A SendMessage with `metadata["shrooms/at"]` (and optionally `shrooms/repeat`) creates a schedule
 * instead of a task (spec §9); the answer is a task in SUBMITTED that names the schedule.
 */
import { randomUUID } from 'node:crypto';
import { scheduleAsTask, scheduleClient, scheduleRequestFromSendMessage } from '@shrooms/client';
import type { SendMessageParams, Task } from '@shrooms/protocol';
import type { NatsConnection } from '@shrooms/runtime';
import { authorize } from '../authz/rules.js';
import type { Caller } from './caller.js';

export type ScheduleHook = (
  params: SendMessageParams,
  target: { machine: string; session: string; caller: Caller },
) => Promise<Task | undefined>;

export function scheduleFromMessage(nc: NatsConnection, timeoutMs: number): ScheduleHook {
  const client = scheduleClient(nc, { timeoutMs });
  return async (params, { machine, session, caller }) => {
    const req = scheduleRequestFromSendMessage(params, {
      machine,
      session,
      origin: { device: caller.device, ...(caller.from ? { from: caller.from } : {}) },
    });
    if (!req) return undefined;
    // A schedule asks for tasks: the same rule as a new task, before it reaches the scheduler.
    authorize('send', caller, { machine, session });
    const reply = await client.create(req);
    return scheduleAsTask(reply.schedule, session, params.message.messageId, params.message.contextId ?? randomUUID());
  };
}
