/**
 * A request proves it comes from a schedule only by matching the schedule record (which only the
 * scheduler's credential writes), against a real nats-server: occurrences the record stands at and
 * results it awaits, with their derived ids, pass — from a machine the bucket names as running a
 * scheduler only; a forged result id, a past instant the schedule never reached, a result nobody
 * awaits, a metadata claim or any other sender do not.
 */
import { Kvm, type KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  BUCKETS,
  META,
  keys,
  occurrenceMessageId,
  resultMessageId,
  scheduledByLine,
  type Schedule,
  type SendMessageParams,
} from '@shrooms/protocol';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultMetadata } from './derive.js';
import { scheduleProof, type ScheduleProof } from './scheduled.js';

const ID = 'weekly-review';
/** The occurrence last sent; its result is awaited. */
const AT = '2026-12-01T08:00:00.000Z';
/** Occurrences of the same rule the record no longer (or never) stands at. */
const EARLIER = '2026-11-24T08:00:00.000Z';
const LONG_AGO = '2020-01-01T00:00:00.000Z';
const NEXT = '2026-12-08T08:00:00.000Z';

/** A weekly schedule as the scheduler leaves it after sending AT: `next` moved on, `last` and `awaiting` recorded. */
function record(id: string, patch: Partial<Schedule> = {}): Schedule {
  return {
    id,
    recipients: ['pi5/review', 'pi5/audit'],
    prompt: 'check the roadmap',
    owner: { device: 'laptop', from: 'laptop/webapp' },
    replyTo: 'laptop/webapp',
    rule: { at: '2026-11-24T08:00', zone: 'Europe/Berlin', repeat: { freq: 'weekly' } },
    state: 'active',
    next: { at: NEXT, cursor: 2, seq: 2 },
    fired: 2,
    missed: 0,
    last: {
      occurrence: AT,
      firedAt: AT,
      late: false,
      deliveries: [
        { recipient: 'pi5/review', outcome: 'sent', taskId: `review:${occurrenceMessageId(id, AT)}` },
        { recipient: 'pi5/audit', outcome: 'refused', error: { key: 'SESSION_NOT_FOUND', message: 'no session' } },
      ],
    },
    awaiting: [{ recipient: 'pi5/review', taskId: `review:${occurrenceMessageId(id, AT)}`, occurrence: AT }],
    createdAt: LONG_AGO,
    updatedAt: AT,
    ...patch,
  };
}
const schedule = record(ID);

const params = (messageId: string, text: string, at = AT, id = ID): SendMessageParams =>
  ({
    message: { messageId, role: 'ROLE_USER', parts: [{ text }] },
    metadata: { [META.schedule]: id, [META.occurrence]: at, [META.scheduledBy]: 'scheduled by someone else' },
  }) as SendMessageParams;
/** An occurrence of schedule `id` at `at` as the scheduler sends it (but for its metadata). */
const occurrence = (at: string, id = ID) => params(occurrenceMessageId(id, at), schedule.prompt, at, id);

let nats: NatsWithConnection;
let nc: NatsConnection;
let kv: KV;
let prove: ScheduleProof;
/** The machine whose scheduler sends (the bucket names it); the target sessions live elsewhere. */
const scheduler = { machine: 'box' };

beforeAll(async () => {
  nats = await startNatsWithConnection();
  nc = nats.nc;
  kv = await new Kvm(nc).create(BUCKETS.schedules, { history: 1 });
  await kv.put(keys.schedule(ID), JSON.stringify(schedule));
  await kv.put(keys.schedulerMachine(scheduler.machine), JSON.stringify({ machine: scheduler.machine, replica: 'box-1' }));
  // Now: two days after the last occurrence, the next one still ahead.
  prove = scheduleProof(nc, () => Date.parse('2026-12-03T00:00:00Z'));
});

afterAll(async () => {
  await nats?.stop();
});

describe('schedule proof', () => {
  const review = { machine: 'pi5', session: 'review' };
  const webapp = { machine: 'laptop', session: 'webapp' };

  it('takes an occurrence with its derived id and the prompt, to a recipient', async () => {
    await expect(prove(occurrence(AT), review, scheduler)).resolves.toMatchObject({ kind: 'occurrence', occurrence: AT });
    await expect(prove(params(occurrenceMessageId(ID, AT), 'something else'), review, scheduler)).resolves.toBeUndefined();
  });

  it('does not take a past instant the schedule is not at as an occurrence, however well its id is derived', async () => {
    for (const at of [EARLIER, LONG_AGO, '2026-12-01T08:00:01.000Z']) {
      await expect(prove(occurrence(at), review, scheduler), at).resolves.toBeUndefined();
    }
  });

  it('takes the occurrence last sent, the one leased, the one retried and the next one, compared as instants', async () => {
    const id = 'leased-review';
    const leased = '2026-12-02T08:00:00.000Z';
    const retried = '2026-12-02T09:00:00.000Z';
    const next = '2026-12-02T10:00:00.000Z';
    await kv.put(
      keys.schedule(id),
      JSON.stringify(
        record(id, {
          next: { at: next, cursor: 3, seq: 3 },
          lease: { by: 'replica-1', until: '2026-12-03T00:01:00.000Z', occurrence: leased },
          retry: { occurrence: retried, attempts: 1, notBefore: leased, error: 'pi5/review: GUARD_UNAVAILABLE' },
        }),
      ),
    );
    for (const at of [AT, leased, retried, next]) {
      await expect(prove(occurrence(at, id), review, scheduler), at).resolves.toMatchObject({ kind: 'occurrence', occurrence: at });
    }
    // The same instant written with another offset is the same occurrence; the record's string is the one kept.
    await expect(prove(occurrence('2026-12-01T09:00:00+01:00', id), review, scheduler)).resolves.toMatchObject({ occurrence: AT });
  });

  it('reads the record once more when it does not stand at the occurrence yet (a replica behind the scheduler)', async () => {
    const id = 'catching-up';
    const late = '2026-12-02T08:00:00.000Z';
    await kv.put(keys.schedule(id), JSON.stringify(record(id)));
    // The claim of a late occurrence (fire-once) moves `next` past the missed one, stored while the
    // gateway waits to read again (as a replica behind the scheduler catches up).
    const claimed = async () => {
      await kv.put(keys.schedule(id), JSON.stringify(record(id, { lease: { by: 'replica-1', until: NEXT, occurrence: late } })));
    };
    const proveAgain = scheduleProof(nc, () => Date.parse('2026-12-03T00:00:00Z'), claimed);
    await expect(proveAgain(occurrence(late, id), review, scheduler)).resolves.toMatchObject({ kind: 'occurrence', occurrence: late });
  });

  it("gives a proven occurrence the schedule's metadata, whatever the request says of itself", async () => {
    const line = scheduledByLine(schedule.owner, AT, schedule.rule.zone);
    await expect(prove(occurrence(AT), review, scheduler)).resolves.toMatchObject({
      metadata: {
        [META.schedule]: ID,
        [META.occurrence]: AT,
        [META.scheduledBy]: line,
        [META.from]: 'laptop/webapp',
        [META.replyTo]: 'laptop/webapp',
      },
    });
    // Only the scheduler knows it sent an occurrence late: that line stands, no other.
    const late = scheduledByLine(schedule.owner, AT, schedule.rule.zone, true);
    const sentLate = occurrence(AT);
    sentLate.metadata![META.scheduledBy] = late;
    await expect(prove(sentLate, review, scheduler)).resolves.toMatchObject({ metadata: { [META.scheduledBy]: late } });
  });

  it("takes a result only with the id derived from the occurrence and one of the schedule's recipients", async () => {
    await expect(prove(params(resultMessageId(ID, AT, 'pi5/review'), 'done'), webapp, scheduler)).resolves.toMatchObject({
      kind: 'result',
    });
    for (const forged of [`${occurrenceMessageId(ID, AT)}-re-forged`, resultMessageId(ID, AT, 'laptop/other')]) {
      await expect(prove(params(forged, 'done'), webapp, scheduler), forged).resolves.toBeUndefined();
    }
    // The right id to anyone but replyTo is not a result either.
    await expect(prove(params(resultMessageId(ID, AT, 'pi5/review'), 'done'), review, scheduler)).resolves.toBeUndefined();
  });

  it("takes a result only while the recipient's task of that occurrence awaits it", async () => {
    // pi5/audit is a recipient, but its task of AT was refused: no result of it is awaited.
    await expect(prove(params(resultMessageId(ID, AT, 'pi5/audit'), 'done'), webapp, scheduler)).resolves.toBeUndefined();
    // pi5/review's result of an earlier occurrence was sent already (the scheduler dropped it from awaiting).
    await expect(prove(params(resultMessageId(ID, EARLIER, 'pi5/review'), 'done', EARLIER), webapp, scheduler)).resolves.toBeUndefined();
  });

  it('takes neither an occurrence nor a result from a machine that runs no scheduler, or no longer', async () => {
    const result = params(resultMessageId(ID, AT, 'pi5/review'), 'done');
    for (const machine of ['laptop', 'pi5']) {
      await expect(prove(occurrence(AT), review, { machine }), machine).resolves.toBeUndefined();
      await expect(prove(result, webapp, { machine }), machine).resolves.toBeUndefined();
    }
    // An operator takes a machine's scheduler out of the bucket: it proves nothing more.
    await kv.put(keys.schedulerMachine('old'), JSON.stringify({ machine: 'old' }));
    await expect(prove(occurrence(AT), review, { machine: 'old' })).resolves.toMatchObject({ kind: 'occurrence' });
    await kv.delete(keys.schedulerMachine('old'));
    await expect(prove(occurrence(AT), review, { machine: 'old' })).resolves.toBeUndefined();
  });

  it('answers NATS_UNAVAILABLE, not "ordinary request", when the schedule cannot be read', async () => {
    const lost = await connect({ servers: nats.url });
    const proveOnLost = scheduleProof(lost, () => Date.parse(AT));
    await lost.close();
    await expect(proveOnLost(occurrence(AT), review, scheduler)).rejects.toMatchObject({ key: 'NATS_UNAVAILABLE' });
  });

  it("asks the stream's leader when the replica a read reaches does not answer (its machine cut off)", async () => {
    // A replica cut off keeps its interest on the other servers until their routes time out: a
    // direct get reaches it and hears nothing. Here the one server's stream answers no direct get
    // and a subscriber that never replies stands for that replica; the stream's leader answers.
    const cut = await startNatsWithConnection();
    try {
      const silent = await new Kvm(cut.nc).create(BUCKETS.schedules, { history: 1, allow_direct: false });
      await silent.put(keys.schedule(ID), JSON.stringify(schedule));
      await silent.put(keys.schedulerMachine(scheduler.machine), JSON.stringify({ machine: scheduler.machine }));
      let unanswered = 0;
      cut.nc.subscribe(`$JS.API.DIRECT.GET.KV_${BUCKETS.schedules}.>`, { callback: () => void unanswered++ });
      await cut.nc.flush();
      const proveOnCut = scheduleProof(cut.nc, () => Date.parse('2026-12-03T00:00:00Z'));
      await expect(proveOnCut(occurrence(AT), review, scheduler)).resolves.toMatchObject({ kind: 'occurrence', occurrence: AT });
      // Both reads (the schedule, whether the sender runs a scheduler) were asked of a replica first.
      expect(unanswered).toBe(2);
    } finally {
      await cut.stop();
    }
  });

  it("keeps of a result's metadata only which schedule and occurrence it answers", () => {
    const md = params('x', 'y').metadata;
    expect(resultMetadata({ kind: 'result' }, md)).toEqual({ [META.schedule]: ID, [META.occurrence]: AT });
    expect(resultMetadata(undefined, md)).toEqual({});
  });
});
