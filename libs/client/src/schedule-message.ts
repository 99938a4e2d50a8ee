/**
 * A2A surface: a `SendMessage` whose metadata carries `shrooms/at` (and optionally `shrooms/repeat`,
 * `shrooms/reply_to`) asks for a schedule instead of a task. The gateway calls
 * `scheduleRequestFromSendMessage` and, when it returns a request, creates the schedule with
 * `scheduleClient(nc).create(...)` (nats/scheduler.ts) and answers with `scheduleAsTask(...)` (a task in SUBMITTED).
 *
 * Metadata (on the message or the request; the message's wins):
 *   shrooms/at        "2026-10-12T08:00[Europe/Berlin]" | "2026-10-12T06:00:00Z" | { at, zone }
 *   shrooms/repeat    "weekly:mon" | "every 2h;count=5" | { freq: 'monthly', day: 31, … }
 *   shrooms/reply_to  true (the asker's claimed session, `shrooms/from`) | "MACHINE/SESSION"
 */
import { createHash } from 'node:crypto';
import {
  META,
  ShroomsError,
  formatRepeat,
  formatWallTime,
  textOf,
  type CreateScheduleRequest,
  type Metadata,
  type Origin,
  type Schedule,
  type SendMessageParams,
  type Task,
} from '@shrooms/protocol';

export interface SendMessageTarget {
  /** The machine and session the message was sent to (the recipient). */
  machine: string;
  session: string;
  /** The verified device and claimed session of the sender. */
  origin: Origin;
}

/** The schedule id for a message: the same for a resend of the same message from the same device. */
export function scheduleIdForMessage(device: string, messageId: string): string {
  return `a2a-${createHash('sha256').update(`${device}\n${messageId}`).digest('hex').slice(0, 20)}`;
}

/** A create request when the message asks for a schedule (`shrooms/at` present), else null. */
export function scheduleRequestFromSendMessage(
  params: Pick<SendMessageParams, 'message' | 'metadata'>,
  target: SendMessageTarget,
): CreateScheduleRequest | null {
  const md: Metadata = { ...params.metadata, ...params.message.metadata };
  const rawAt = md[META.at];
  if (rawAt === undefined || rawAt === null || rawAt === '') return null;
  if (params.message.taskId) throw new ShroomsError('INVALID_PARAMS', `${META.at} cannot be used on an answer to a task`);
  let at: string;
  let zone: string | undefined;
  if (typeof rawAt === 'string') at = rawAt;
  else if (typeof rawAt === 'object' && typeof (rawAt as { at?: unknown }).at === 'string') {
    at = (rawAt as { at: string }).at;
    const z = (rawAt as { zone?: unknown }).zone;
    if (typeof z === 'string') zone = z;
  } else throw new ShroomsError('INVALID_PARAMS', `${META.at} must be a date-time string or { at, zone }`);
  const text = textOf(params.message);
  if (!text) throw new ShroomsError('INVALID_PARAMS', 'a scheduled message needs text');
  const rawReply = md[META.replyTo];
  let replyTo: string | undefined;
  if (rawReply === true) {
    if (!target.origin.from) throw new ShroomsError('INVALID_PARAMS', `${META.replyTo}: true needs a claimed session (${META.from})`);
    replyTo = target.origin.from;
  } else if (typeof rawReply === 'string' && rawReply) replyTo = rawReply;
  const repeat = md[META.repeat];
  return {
    id: scheduleIdForMessage(target.origin.device, params.message.messageId),
    recipients: [`${target.machine}/${target.session}`],
    prompt: text,
    at,
    ...(zone ? { zone } : {}),
    ...(repeat !== undefined && repeat !== null && repeat !== '' ? { repeat: repeat as CreateScheduleRequest['repeat'] } : {}),
    origin: target.origin,
    ...(replyTo ? { replyTo } : {}),
  };
}

/**
 * The A2A answer to a scheduling SendMessage: a task in SUBMITTED named after the message (so
 * GetTask on it is the asker's handle), carrying the schedule id and the first occurrence.
 */
export function scheduleAsTask(s: Schedule, session: string, messageId: string, contextId: string): Task {
  const when = s.next ? formatWallTime(s.next.at, s.rule.zone) : 'never';
  const repeat = s.rule.repeat ? `, repeating ${formatRepeat(s.rule.repeat)}` : '';
  return {
    id: `${session}:${messageId}`,
    contextId,
    status: {
      state: 'TASK_STATE_SUBMITTED',
      timestamp: s.updatedAt,
      message: {
        messageId: `${session}:${messageId}#scheduled`,
        role: 'ROLE_AGENT',
        parts: [{ text: `scheduled ${s.id}: first ${when}${repeat}` }],
      },
    },
    metadata: {
      [META.schedule]: s.id,
      ...(s.next ? { [META.occurrence]: s.next.at } : {}),
      [META.session]: session,
    },
  };
}
