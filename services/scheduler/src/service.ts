/**
 * The scheduler's NATS service (`shrooms-scheduler`, queue group `shrooms-scheduler`): `create`,
 * `list`, `cancel` on `subjects.scheduler(op)`. Registered with the services API, so
 * `nats micro ls|info|stats` see every replica.
 */
import {
  QUEUE_GROUPS,
  SERVICE_NAMES,
  ShroomsError,
  subjects,
  type Origin,
  CancelScheduleRequestSchema,
  CreateScheduleRequestSchema,
  ListSchedulesRequestSchema,
  type CancelScheduleReply,
  type CreateScheduleReply,
  type CreateScheduleRequest,
  type ListSchedulesReply,
  type Schedule,
} from '@shrooms/protocol';
import { addService, jsonEndpoint, type Logger, type NatsConnection, type Service } from '@shrooms/runtime';
import type { SchedulerConfig } from './config.js';
import { buildSchedule, newScheduleId } from './create.js';
import type { Engine } from './engine.js';
import type { ScheduleStorePort } from './store.js';

export const SCHEDULER_VERSION = '0.1.0';

export interface SchedulerOps {
  create(req: CreateScheduleRequest): Promise<CreateScheduleReply>;
  list(req: unknown): Promise<ListSchedulesReply>;
  cancel(req: unknown): Promise<CancelScheduleReply>;
}

type OpsConfig = Pick<SchedulerConfig, 'LIMIT_RECIPIENTS' | 'LIMIT_TEXT_BYTES' | 'LIMIT_SCHEDULES' | 'SCHEDULER_MIN_INTERVAL_MS'>;

/** The operations behind the endpoints (no NATS here; tests call them directly). */
export function schedulerOps(
  store: ScheduleStorePort,
  engine: Engine,
  config: OpsConfig,
  log: Logger,
  now: () => number = Date.now,
): SchedulerOps {
  return {
    async create(req) {
      const active = [...engine.cache.values()].filter((s) => s.schedule.state === 'active').length;
      if (active >= config.LIMIT_SCHEDULES) {
        throw new ShroomsError('LIMIT_EXCEEDED', `there are ${active} active schedules; the limit is ${config.LIMIT_SCHEDULES}`, {
          limit: 'schedules',
          max: config.LIMIT_SCHEDULES,
        });
      }
      // Old finished schedules make room by going early: they never count against a new one.
      await engine.trimFinished();
      for (let attempt = 0; attempt < 5; attempt++) {
        const schedule = buildSchedule(req, config, now(), req.id ?? newScheduleId());
        const stored = await store.create(schedule);
        if (stored) {
          engine.remember(schedule.id, stored);
          log.info(
            { schedule: schedule.id, recipients: schedule.recipients, next: schedule.next?.at, owner: schedule.owner },
            'schedule created',
          );
          return { schedule, created: true };
        }
        if (req.id) {
          // Creating the same id again (a resent request) returns the schedule, if it is the same owner's.
          const existing = await store.get(req.id);
          if (!existing) continue;
          if (!sameDevice(existing.schedule.owner.device, req.origin.device))
            throw new ShroomsError('INVALID_PARAMS', `schedule id ${req.id} is taken`);
          return { schedule: existing.schedule, created: false };
        }
      }
      throw new ShroomsError('INTERNAL', 'could not find a free schedule id; retry');
    },

    async list(raw) {
      const q = ListSchedulesRequestSchema.parse(raw ?? {});
      const all = q.id ? [await store.get(q.id)].filter((s) => s !== null) : await store.all();
      const match = all
        .map((s) => s.schedule)
        .filter((s) => q.state === 'all' || s.state === q.state)
        .filter((s) => !q.recipient || s.recipients.includes(q.recipient))
        .filter((s) => !q.device || s.owner.device === q.device)
        .filter((s) => !q.from || s.owner.from === q.from)
        .sort(byNext);
      return { schedules: match.slice(0, q.limit), total: match.length };
    },

    async cancel(raw) {
      const req = CancelScheduleRequestSchema.parse(raw);
      const stored = await store.update(req.id, (cur) => {
        if (!mayCancel(cur, req.origin)) {
          throw new ShroomsError(
            'NOT_ALLOWED',
            `only ${cur.owner.device} (who scheduled it) or a recipient's machine may cancel schedule ${cur.id}`,
          );
        }
        if (cur.state !== 'active') return null;
        const { lease: _l, retry: _r, ...rest } = cur;
        return { ...rest, state: 'canceled', canceledBy: who(req.origin), updatedAt: new Date(now()).toISOString() };
      });
      if (!stored) throw new ShroomsError('SCHEDULE_NOT_FOUND', `no schedule ${req.id}`);
      engine.remember(req.id, stored);
      log.info({ schedule: req.id, by: who(req.origin) }, 'schedule canceled');
      return { schedule: stored.schedule };
    },
  };
}

const who = (o: Origin) => (o.from ? `${o.device} (${o.from})` : o.device);

/**
 * One device under its two spellings: the gateway names a peer `DEVICE.MESH` (`pi5.home`), a
 * machine's own tools name it by its machine name (`pi5`).
 */
const hostOf = (device: string) => device.split('.')[0]!;
const sameDevice = (a: string, b: string) => a === b || hostOf(a) === hostOf(b);

/** The owner's device, or the machine of one of its recipients (a session's owner may stop tasks coming to it). */
function mayCancel(s: Schedule, origin: Origin): boolean {
  if (sameDevice(origin.device, s.owner.device)) return true;
  return s.recipients.some((r) => r.slice(0, r.indexOf('/')) === hostOf(origin.device));
}

function byNext(a: Schedule, b: Schedule): number {
  const an = a.next ? Date.parse(a.next.at) : Infinity;
  const bn = b.next ? Date.parse(b.next.at) : Infinity;
  return an - bn || a.createdAt.localeCompare(b.createdAt);
}

/** Registers the endpoints; returns the service (stop it on shutdown). */
export async function startSchedulerService(nc: NatsConnection, ops: SchedulerOps, machine: string, log: Logger): Promise<Service> {
  const svc = await addService(nc, {
    name: SERVICE_NAMES.scheduler,
    version: SCHEDULER_VERSION,
    description: 'shrooms scheduler: tasks at a time, once or repeating',
    metadata: { machine },
    queue: QUEUE_GROUPS.scheduler,
  });
  const opts = (op: 'create' | 'list' | 'cancel') => ({ subject: subjects.scheduler(op), queue: QUEUE_GROUPS.scheduler });
  jsonEndpoint(
    svc,
    'create',
    opts('create'),
    (d) => CreateScheduleRequestSchema.parse(d),
    (req) => ops.create(req),
    log,
  );
  jsonEndpoint(
    svc,
    'list',
    opts('list'),
    (d) => ListSchedulesRequestSchema.parse(d ?? {}),
    (req) => ops.list(req),
    log,
  );
  jsonEndpoint(
    svc,
    'cancel',
    opts('cancel'),
    (d) => CancelScheduleRequestSchema.parse(d),
    (req) => ops.cancel(req),
    log,
  );
  return svc;
}
