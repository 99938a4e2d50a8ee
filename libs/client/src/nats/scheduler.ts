/**
 * The scheduler's NATS service (`shrooms.sched.create|list|cancel`) and its one client: requests
 * to the service, replies parsed, refusals rethrown as ShroomsError with their codes. Nobody
 * answering (no scheduler running, or NATS away) is SCHEDULER_UNAVAILABLE (retryable).
 * `scheduleClient` is it typed, on a connection the caller owns (the gateway, tests). The tools and
 * the CLI reach the scheduler through a gateway (`gatewayScheduler`), which names the owner from
 * the device.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import {
  ShroomsError,
  subjects,
  type CancelScheduleRequest,
  type CreateScheduleReply,
  type CreateScheduleRequest,
  type ListSchedulesReply,
  type ListSchedulesRequest,
  type Schedule,
} from '@shrooms/protocol';
import { requestJson } from '@shrooms/runtime';
import type { SchedulerOp } from '../schedules.js';

const DEFAULT_TIMEOUT_MS = 5_000;

const unavailable = (why: string) => new ShroomsError('SCHEDULER_UNAVAILABLE', `the scheduler is not running (${why})`);

/** One request to the service; `timeoutMs`: how long to wait for a scheduler replica to answer. */
function schedulerRequest<T>(nc: NatsConnection, op: SchedulerOp, body: unknown, timeoutMs: number): Promise<T> {
  return requestJson<T>(nc, subjects.scheduler(op), body, {
    timeoutMs,
    unavailable: () => unavailable(`no replica answered on ${subjects.scheduler(op)} within ${timeoutMs} ms`),
  });
}

export interface ScheduleClient {
  /** Creates a schedule (or returns the existing one for a resent `id`). */
  create(req: CreateScheduleRequest): Promise<CreateScheduleReply>;
  /** Schedules matching the filters (default: active ones), soonest first. */
  list(req?: ListSchedulesRequest): Promise<ListSchedulesReply>;
  /** Cancels a schedule; it fires no more. SCHEDULE_NOT_FOUND, NOT_ALLOWED. */
  cancel(req: CancelScheduleRequest): Promise<Schedule>;
}

/** `timeoutMs` (default 5000): how long to wait for a scheduler replica to answer. */
export function scheduleClient(nc: NatsConnection, opts: { timeoutMs?: number } = {}): ScheduleClient {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    async create(req) {
      const { schedule, created } = await schedulerRequest<CreateScheduleReply>(nc, 'create', req, timeoutMs);
      return { schedule, created };
    },
    async list(req = {}) {
      const { schedules, total } = await schedulerRequest<ListSchedulesReply>(nc, 'list', req, timeoutMs);
      return { schedules, total };
    },
    async cancel(req) {
      return (await schedulerRequest<{ schedule: Schedule }>(nc, 'cancel', req, timeoutMs)).schedule;
    },
  };
}
