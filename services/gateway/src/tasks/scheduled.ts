/**
 * Whether a SendMessage is a schedule's occurrence — decided from the schedule itself, which only
 * the scheduler's own NATS credential can write (bucket `shrooms_schedules`, deploy/nats), never
 * from the `shrooms/schedule` metadata a client may set. A request is an occurrence when the schedule
 * it names exists and is not canceled, the target is one of its recipients, the message id is the
 * one derived from the schedule and the occurrence, the occurrence is not in the future, the text is
 * the schedule's prompt, and the record stands at that occurrence: it is the record's `next`, the
 * one leased or retried, or the `last` one sent (the scheduler claims a lease on `next`, sends, then
 * moves `next` on and records `last`). A result: the target is the schedule's `replyTo`, the id the
 * one derived from the occurrence and a recipient (resultMessageId), and that recipient's task of
 * that occurrence is still `awaiting` its result (the scheduler drops the entry only once the result
 * was sent). And either is proven only when its sender is a machine that runs a scheduler: one the
 * schedule bucket names (`_schedulers.MACHINE`, written by each scheduler replica). The ledger keys a
 * task by its message id, so whoever sent an occurrence's id first would be its asker (able to
 * cancel it) and the scheduler's own send only a resend; whoever sent a result's id first would
 * have put their words in the result's place. The gateway refuses any other use of such an id
 * (service.ts, rule `send_scheduled`).
 *
 * What a proven occurrence says of itself is derived from the record as well (`metadata`): the
 * scheduler's own metadata, so the client's claims of who scheduled it and for whom count for nothing.
 */
import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import {
  BUCKETS,
  META,
  ScheduleSchema,
  formatAgent,
  keys,
  occurrenceMessageId,
  resultMessageId,
  scheduledByLine,
  textOf,
  type Metadata,
  type SendMessageParams,
} from '@shrooms/protocol';
import { isNatsOutage, natsUnavailable, type NatsConnection } from '@shrooms/runtime';
import type { z } from 'zod';
import type { Caller } from './caller.js';

/** A proven occurrence, with the metadata its schedule gives it (what the scheduler sends). */
export interface ProvenOccurrence {
  kind: 'occurrence';
  schedule: string;
  occurrence: string;
  /** `shrooms/schedule`, `occurrence`, `scheduled_by`, and `from`, `reply_to` when the schedule has them. */
  metadata: Metadata;
}

/** A proven result of an occurrence, sent back to the schedule's `replyTo`. */
export interface ProvenResult {
  kind: 'result';
  schedule: string;
  occurrence: string;
}

/**
 * What a request proves it is — an occurrence, or the result of one sent back to the schedule's
 * `replyTo` (message id `…-re-…`) — or undefined: an ordinary request.
 */
export type ScheduleProof = (
  params: SendMessageParams,
  target: { machine: string; session: string },
  caller: Pick<Caller, 'machine'>,
) => Promise<ProvenOccurrence | ProvenResult | undefined>;

/** The parts of a schedule the proof reads (the record has more; they may change without harm). */
const ProofSchema = ScheduleSchema.pick({
  recipients: true,
  prompt: true,
  state: true,
  replyTo: true,
  owner: true,
  rule: true,
  next: true,
  lease: true,
  retry: true,
  last: true,
  awaiting: true,
});
type ProofRecord = z.infer<typeof ProofSchema>;

/** An occurrence may arrive this early (clocks of two machines), ms. */
const EARLY_MS = 60_000;

/**
 * A record that does not stand at the occurrence (or result) asked about is read once more after
 * this long, ms: the read may come from a replica that has not seen the scheduler's last write yet
 * (a late occurrence's lease moves `next` past the missed one).
 */
const READ_AGAIN_MS = 250;

/**
 * A read any replica answers (a direct get) not answered within this long is asked of the stream's
 * leader, ms. A replica whose machine was just cut off keeps its interest on the other servers until
 * their routes time out, so a direct get may go to it and hear nothing; the leader of the side with
 * the quorum answers.
 */
const DIRECT_TIMEOUT_MS = 2_000;

/** The record's occurrence equal to instant `at` (ms), as the record writes it, if it stands at one. */
function recordedOccurrence(s: ProofRecord, at: number): string | undefined {
  const candidates = [s.next?.at, s.lease?.occurrence, s.retry?.occurrence, s.last?.occurrence];
  return candidates.find((c) => c !== undefined && Date.parse(c) === at);
}

/** The awaited occurrence equal to instant `at` (ms) whose result has message id `mid`, if any. */
function awaitedResult(id: string, s: ProofRecord, at: number, mid: string): string | undefined {
  return s.awaiting.find((a) => Date.parse(a.occurrence) === at && resultMessageId(id, a.occurrence, a.recipient) === mid)?.occurrence;
}

/**
 * The metadata the scheduler sends with occurrence `at` (deliver/occurrence.ts). Whether it went out
 * late only the scheduler knew: the claimed `scheduled_by` stands when it is the derived line with
 * the late suffix; otherwise it is the derived line without it.
 */
function occurrenceMetadata(id: string, s: ProofRecord, at: string, claimedLine: unknown): Metadata {
  const late = scheduledByLine(s.owner, at, s.rule.zone, true);
  const metadata: Metadata = {
    [META.schedule]: id,
    [META.occurrence]: at,
    [META.scheduledBy]: claimedLine === late ? late : scheduledByLine(s.owner, at, s.rule.zone),
  };
  if (s.owner.from) metadata[META.from] = s.owner.from;
  if (s.replyTo) metadata[META.replyTo] = s.replyTo;
  return metadata;
}

/**
 * `now`: the clock occurrences are checked against, ms (default Date.now). `readAgain`: the wait
 * before a record is read once more (default READ_AGAIN_MS).
 */
export function scheduleProof(
  nc: NatsConnection,
  now: () => number = Date.now,
  readAgain: () => Promise<void> = () => new Promise((resolve) => setTimeout(resolve, READ_AGAIN_MS)),
): ScheduleProof {
  let direct: Promise<KV> | undefined;
  let leader: Promise<KV> | undefined;

  /** The entry at `key`: from any replica, or from the leader when the replica asked did not answer. */
  async function get(key: string): Promise<KvEntry | null> {
    try {
      direct ??= new Kvm(jetstream(nc, { timeout: DIRECT_TIMEOUT_MS, checkAPI: false })).open(BUCKETS.schedules, { allow_direct: true });
      return await (await direct).get(key);
    } catch (err) {
      direct = undefined;
      if (!isNatsOutage(err)) throw err;
    }
    try {
      leader ??= new Kvm(jetstream(nc, { checkAPI: false })).open(BUCKETS.schedules, { allow_direct: false });
      return await (await leader).get(key);
    } catch (err) {
      leader = undefined;
      throw err;
    }
  }

  /** The bucket's value at `key`, or undefined when it has none. */
  async function read(key: string, what: string): Promise<unknown> {
    let entry;
    try {
      entry = await get(key);
    } catch (err) {
      // Not able to read the schedule is not "no such schedule": the scheduler's own occurrence
      // would be refused. It retries on NATS_UNAVAILABLE.
      if (isNatsOutage(err)) throw natsUnavailable(`could not read ${what} to check the occurrence; nothing was changed`);
      return undefined;
    }
    if (!entry || entry.operation !== 'PUT' || entry.value.length === 0) return undefined;
    try {
      return entry.json<unknown>();
    } catch {
      return undefined;
    }
  }

  /** The schedule as stored; undefined when there is none (or none that parses), or it is canceled. */
  async function readSchedule(id: string): Promise<ProofRecord | undefined> {
    const s = ProofSchema.safeParse(await read(keys.schedule(id), `schedule ${id}`));
    return s.success && s.data.state !== 'canceled' ? s.data : undefined;
  }

  /** Whether the bucket names `machine` as one that runs a scheduler (written by the scheduler only). */
  async function runsScheduler(machine: string): Promise<boolean> {
    return (await read(keys.schedulerMachine(machine), `whether ${machine} runs a scheduler`)) !== undefined;
  }

  /**
   * The record when it `fits` the request and stands at what the request says it is (`at` gives the
   * record's occurrence); one that fits but does not stand there yet is read once more.
   */
  async function readAt(
    id: string,
    fits: (s: ProofRecord) => boolean,
    at: (s: ProofRecord) => string | undefined,
  ): Promise<{ s: ProofRecord; at: string } | undefined> {
    for (let again = false; ; again = true) {
      const s = await readSchedule(id);
      if (!s || !fits(s)) return undefined;
      const found = at(s);
      if (found !== undefined) return { s, at: found };
      if (again) return undefined;
      await readAgain();
    }
  }

  /** What the schedule's record says the request is, whoever sent it. */
  async function proveRecord(
    params: SendMessageParams,
    target: { machine: string; session: string },
  ): Promise<ProvenOccurrence | ProvenResult | undefined> {
    const md = { ...params.message.metadata, ...params.metadata };
    const id = md[META.schedule];
    const at = md[META.occurrence];
    if (typeof id !== 'string' || typeof at !== 'string' || !id || Number.isNaN(Date.parse(at))) return undefined;
    const instant = Date.parse(at);
    const occurrence = occurrenceMessageId(id, at);
    const mid = params.message.messageId;
    if ((mid !== occurrence && !mid.startsWith(`${occurrence}-re-`)) || instant > now() + EARLY_MS) return undefined;
    const to = formatAgent(target);
    if (mid === occurrence) {
      const found = await readAt(
        id,
        (s) => s.recipients.includes(to) && textOf(params.message) === s.prompt,
        (s) => recordedOccurrence(s, instant),
      );
      if (!found) return undefined;
      const metadata = occurrenceMetadata(id, found.s, found.at, md[META.scheduledBy]);
      return { kind: 'occurrence', schedule: id, occurrence: found.at, metadata };
    }
    // A result carries the id derived from the occurrence and one of the schedule's recipients, and
    // that recipient's task of that occurrence still awaits its result.
    const found = await readAt(
      id,
      (s) => s.replyTo === to && s.recipients.some((r) => resultMessageId(id, at, r) === mid),
      (s) => awaitedResult(id, s, instant, mid),
    );
    return found ? { kind: 'result', schedule: id, occurrence: at } : undefined;
  }

  return async function proveScheduled(params, target, caller) {
    const proof = await proveRecord(params, target);
    return proof && (await runsScheduler(caller.machine)) ? proof : undefined;
  };
}
