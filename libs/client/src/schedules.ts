/**
 * The scheduler as the tools and the CLI use it (spec §9): through this machine's gateway
 * (`gatewayScheduler`), which names the owner from the device; a port for tests to stand in.
 * Until a scheduler replica runs every call is `SCHEDULER_UNAVAILABLE` ("the scheduler is not running").
 */
import { RepeatSchema, ShroomsError, formatRepeat, parseDelay } from '@shrooms/protocol';
import { z } from 'zod';
import { resolveAt } from './local-time.js';

export type SchedulerOp = 'create' | 'list' | 'cancel';

/** How requests reach the scheduler; injectable (tests). */
export interface SchedulerPort {
  request(op: SchedulerOp, body: unknown): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * When a schedule first fires, as the scheduler is asked: the `at` given (a local one in `zone`, else
 * this machine's zone; a time of day alone the next one there: `resolveAt`), or `in` (a delay such as
 * `10m`) from `now` as an instant, to the next whole second. INVALID_PARAMS for neither, both, or a
 * delay `parseDelay` does not take.
 */
export function firstAt(when: { at?: string; in?: string; zone?: string }, now = Date.now()): { at: string; zone?: string } {
  if (when.at !== undefined && when.in !== undefined) throw new ShroomsError('INVALID_PARAMS', 'say when with at or in, not both');
  if (when.in !== undefined) {
    let ms: number;
    try {
      ms = parseDelay(when.in);
    } catch (err) {
      throw new ShroomsError('INVALID_PARAMS', (err as Error).message);
    }
    const at = new Date(Math.ceil((now + ms) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    return when.zone ? { at, zone: when.zone } : { at };
  }
  if (!when.at) throw new ShroomsError('INVALID_PARAMS', 'say when: at (a time) or in (a delay such as 10m)');
  return resolveAt(when.at, when.zone, now);
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
    /** The send of `next` failed for a reason that may pass; tried again from `notBefore`. */
    retry: z.object({ attempts: z.number(), notBefore: z.string(), error: z.string() }).loose().optional(),
    /** The last occurrence sent: what each recipient's gateway answered. */
    last: z
      .object({
        occurrence: z.string(),
        deliveries: z.array(
          z
            .object({
              recipient: z.string(),
              outcome: z.string(),
              taskId: z.string().optional(),
              error: z.object({ key: z.string(), message: z.string() }).loose().optional(),
            })
            .loose(),
        ),
      })
      .loose()
      .optional(),
  })
  .loose();
export type ScheduleView = z.infer<typeof ScheduleViewSchema>;

/** Outcomes of a delivery that made or found the recipient's task. */
const DELIVERED = new Set(['sent', 'existing']);

/**
 * A schedule for a person or an agent to read: one line (id, recipients, when, rule, prompt cut to
 * `promptMax`), then an indented line for each thing that went wrong — an occurrence being tried
 * again and why, a recipient whose gateway refused the last one — so that a schedule to a session
 * that is gone does not read as simply "done". `when` shows the next occurrence (default: the instant
 * as the scheduler wrote it; the CLI shows the wall time of the schedule's zone).
 */
export function describeSchedule(s: ScheduleView, opts: { promptMax?: number; when?: (at: string, zone: string) => string } = {}): string {
  const promptMax = opts.promptMax ?? 80;
  const when = opts.when ?? ((at: string) => at);
  const next = s.state === 'active' ? (s.next ? `next ${when(s.next.at, s.rule.zone)}` : 'no more occurrences') : s.state;
  const repeat = s.rule.repeat ? `, repeating ${repeatText(s.rule.repeat)}` : '';
  const prompt = s.prompt.length > promptMax ? `${s.prompt.slice(0, promptMax - 1)}…` : s.prompt;
  const lines = [`${s.id} → ${s.recipients.join(', ')}: ${next} (${s.rule.zone}${repeat}) — "${prompt}"`];
  if (s.retry) lines.push(`  trying again from ${s.retry.notBefore} (attempt ${s.retry.attempts + 1}): ${s.retry.error}`);
  for (const d of s.last?.deliveries ?? []) {
    if (DELIVERED.has(d.outcome)) continue;
    const why = d.error ? `: ${d.error.message} [${d.error.key}]` : '';
    lines.push(`  occurrence ${s.last!.occurrence} ${d.outcome} for ${d.recipient}${why}`);
  }
  return lines.join('\n');
}

/** A repeat in its short form (`weekly:mon;count=10`), as people write it; one it cannot read, as JSON. */
function repeatText(r: unknown): string {
  if (typeof r === 'string') return r;
  const p = RepeatSchema.safeParse(r);
  return p.success ? formatRepeat(p.data) : JSON.stringify(r);
}

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
