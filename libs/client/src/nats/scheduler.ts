/**
 * The scheduler's service client (the gateway's, the tests'; the tools and the CLI reach it through
 * the gateway or `natsScheduler`): NATS requests to the service,
 * replies parsed, refusals rethrown as ShroomsError with their codes. Nobody answering (no scheduler
 * running, or NATS away) is SCHEDULER_UNAVAILABLE (retryable).
 */
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
import { requestJson, type NatsConnection } from '@shrooms/runtime';

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
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const call = <T>(op: 'create' | 'list' | 'cancel', body: unknown) =>
    requestJson<T>(nc, subjects.scheduler(op), body, {
      timeoutMs,
      unavailable: new ShroomsError(
        'SCHEDULER_UNAVAILABLE',
        `the scheduler is not running (no replica answered on ${subjects.scheduler(op)} within ${timeoutMs} ms)`,
      ),
    });
  return {
    async create(req) {
      const { schedule, created } = await call<CreateScheduleReply>('create', req);
      return { schedule, created };
    },
    async list(req = {}) {
      const { schedules, total } = await call<ListSchedulesReply>('list', req);
      return { schedules, total };
    },
    async cancel(req) {
      return (await call<{ schedule: Schedule }>('cancel', req)).schedule;
    },
  };
}
