/**
 * Whether a SendMessage is a schedule's occurrence — decided from the schedule itself, which only
 * the scheduler's own NATS credential can write (bucket `shrooms_schedules`, deploy/nats), never
 * from the `shrooms/schedule` metadata a client may set. A request is an occurrence when the schedule
 * it names exists and is not canceled, the target is one of its recipients, the message id is the
 * one derived from the schedule and the occurrence, the occurrence is not in the future, and the
 * text is the schedule's prompt (a result: the target is the schedule's `replyTo` and the id the one
 * derived from the occurrence and one of its recipients, resultMessageId). Anyone sending exactly that asks for exactly the scheduled task
 * (the same message id is the same task), so it gains nothing by sending it.
 */
import { Kvm, type KV } from '@nats-io/kv';
import {
  BUCKETS,
  META,
  ScheduleSchema,
  formatAgent,
  keys,
  occurrenceMessageId,
  resultMessageId,
  textOf,
  type SendMessageParams,
} from '@shrooms/protocol';
import { isNatsOutage, natsUnavailable, type NatsConnection } from '@shrooms/runtime';

/**
 * What a request proves it is — an occurrence, or the result of one sent back to the schedule's
 * `replyTo` (message id `…-re-…`) — or undefined: an ordinary request.
 */
export type ScheduleProof = (
  params: SendMessageParams,
  target: { machine: string; session: string },
) => Promise<{ schedule: string; occurrence: string; kind: 'occurrence' | 'result' } | undefined>;

/** The parts of a schedule the proof reads (the record has more; they may change without harm). */
const ProofSchema = ScheduleSchema.pick({ recipients: true, prompt: true, state: true, replyTo: true });

/** An occurrence may arrive this early (clocks of two machines), ms. */
const EARLY_MS = 60_000;

export function scheduleProof(nc: NatsConnection, now: () => number = Date.now): ScheduleProof {
  let kv: Promise<KV> | undefined;
  return async function proveScheduled(params, target) {
    const md = { ...params.message.metadata, ...params.metadata };
    const id = md[META.schedule];
    const at = md[META.occurrence];
    if (typeof id !== 'string' || typeof at !== 'string' || !id || Number.isNaN(Date.parse(at))) return undefined;
    const occurrence = occurrenceMessageId(id, at);
    const mid = params.message.messageId;
    if ((mid !== occurrence && !mid.startsWith(`${occurrence}-re-`)) || Date.parse(at) > now() + EARLY_MS) return undefined;
    let entry;
    try {
      kv ??= new Kvm(nc).open(BUCKETS.schedules, { allow_direct: true });
      entry = await (await kv).get(keys.schedule(id));
    } catch (err) {
      kv = undefined;
      // Not able to read the schedule is not "no such schedule": an occurrence taken as an ordinary
      // request would lose its schedule and be held or counted like one. The scheduler retries.
      if (isNatsOutage(err)) throw natsUnavailable(`could not read schedule ${id} to check the occurrence; nothing was changed`);
      return undefined;
    }
    if (!entry || entry.operation !== 'PUT' || entry.value.length === 0) return undefined;
    const s = ProofSchema.safeParse(entry.json<unknown>());
    if (!s.success || s.data.state === 'canceled') return undefined;
    const to = formatAgent(target);
    if (mid === occurrence) {
      if (!s.data.recipients.includes(to) || textOf(params.message) !== s.data.prompt) return undefined;
      return { schedule: id, occurrence: at, kind: 'occurrence' };
    }
    // A result carries the id derived from the occurrence and one of the schedule's recipients.
    const isResult = s.data.replyTo === to && s.data.recipients.some((r) => resultMessageId(id, at, r) === mid);
    return isResult ? { schedule: id, occurrence: at, kind: 'result' } : undefined;
  };
}
