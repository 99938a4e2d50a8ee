/**
 * The scheduler as the tools and the CLI use it (spec §9): through this machine's gateway by
 * default (`gatewayScheduler`), or straight over NATS (`natsScheduler` in nats/scheduler.ts).
 * Until a scheduler replica runs every call is `SCHEDULER_UNAVAILABLE` ("the scheduler is not running").
 */
import { z } from 'zod';

export type SchedulerOp = 'create' | 'list' | 'cancel';

/** How requests reach the scheduler; injectable (a bridge passes its own connection). */
export interface SchedulerPort {
  request(op: SchedulerOp, body: unknown): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** What the client reads of a schedule (the scheduler owns the full record). */
export const ScheduleViewSchema = z
  .object({
    id: z.string(),
    recipients: z.array(z.string()),
    prompt: z.string(),
    state: z.string(),
    rule: z.object({ at: z.string(), zone: z.string(), repeat: z.unknown().optional() }).loose(),
    next: z.object({ at: z.string() }).loose().nullable().optional(),
    owner: z.object({ device: z.string(), from: z.string().optional() }).loose().optional(),
    replyTo: z.string().optional(),
    fired: z.number().optional(),
    missed: z.number().optional(),
    createdAt: z.string().optional(),
  })
  .loose();
export type ScheduleView = z.infer<typeof ScheduleViewSchema>;

/**
 * The default port: the schedule methods of this machine's gateway (`POST /a2a`, JSON-RPC
 * CreateSchedule | ListSchedules | CancelSchedule). Needs only HTTP, and the gateway puts the
 * verified device in as the owner.
 */
export function gatewayScheduler(rpc: (method: string, params: unknown) => Promise<unknown>): SchedulerPort {
  const methods = { create: 'CreateSchedule', list: 'ListSchedules', cancel: 'CancelSchedule' } as const;
  return {
    async request(op, body) {
      return (await rpc(methods[op], body)) as Record<string, unknown>;
    },
    async close() {},
  };
}
