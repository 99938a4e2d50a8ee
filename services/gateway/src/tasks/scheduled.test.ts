/**
 * A request proves it comes from a schedule only by matching the schedule record (which only the
 * scheduler's credential writes), against a real nats-server: occurrences and results with their
 * derived ids pass, a forged result id or metadata claim does not.
 */
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { BUCKETS, META, keys, occurrenceMessageId, resultMessageId, type SendMessageParams } from '@shrooms/protocol';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultMetadata } from './derive.js';
import { scheduleProof, type ScheduleProof } from './scheduled.js';

const ID = 'weekly-review';
const AT = '2026-12-01T08:00:00.000Z';
const schedule = { recipients: ['pi5/review'], prompt: 'check the roadmap', state: 'active', replyTo: 'laptop/webapp' };
const params = (messageId: string, text: string): SendMessageParams =>
  ({
    message: { messageId, role: 'ROLE_USER', parts: [{ text }] },
    metadata: { [META.schedule]: ID, [META.occurrence]: AT, [META.scheduledBy]: 'scheduled by someone else' },
  }) as SendMessageParams;

let nats: NatsWithConnection;
let nc: NatsConnection;
let prove: ScheduleProof;

beforeAll(async () => {
  nats = await startNatsWithConnection();
  nc = nats.nc;
  const kv = await new Kvm(nc).create(BUCKETS.schedules, { history: 1 });
  await kv.put(keys.schedule(ID), JSON.stringify(schedule));
  prove = scheduleProof(nc, () => Date.parse(AT));
});

afterAll(async () => {
  await nats?.stop();
});

describe('schedule proof', () => {
  const review = { machine: 'pi5', session: 'review' };
  const webapp = { machine: 'laptop', session: 'webapp' };

  it('takes an occurrence with its derived id and the prompt, to a recipient', async () => {
    await expect(prove(params(occurrenceMessageId(ID, AT), schedule.prompt), review)).resolves.toMatchObject({ kind: 'occurrence' });
    await expect(prove(params(occurrenceMessageId(ID, AT), 'something else'), review)).resolves.toBeUndefined();
  });

  it("takes a result only with the id derived from the occurrence and one of the schedule's recipients", async () => {
    await expect(prove(params(resultMessageId(ID, AT, 'pi5/review'), 'done'), webapp)).resolves.toMatchObject({ kind: 'result' });
    for (const forged of [`${occurrenceMessageId(ID, AT)}-re-forged`, resultMessageId(ID, AT, 'laptop/other')]) {
      await expect(prove(params(forged, 'done'), webapp), forged).resolves.toBeUndefined();
    }
    // The right id to anyone but replyTo is not a result either.
    await expect(prove(params(resultMessageId(ID, AT, 'pi5/review'), 'done'), review)).resolves.toBeUndefined();
  });

  it('answers NATS_UNAVAILABLE, not "ordinary request", when the schedule cannot be read', async () => {
    const lost = await connect({ servers: nats.url });
    const proveOnLost = scheduleProof(lost, () => Date.parse(AT));
    await lost.close();
    await expect(proveOnLost(params(occurrenceMessageId(ID, AT), schedule.prompt), review)).rejects.toMatchObject({
      key: 'NATS_UNAVAILABLE',
    });
  });

  it("keeps of a result's metadata only which schedule and occurrence it answers", () => {
    const md = params('x', 'y').metadata;
    expect(resultMetadata({ kind: 'result' }, md)).toEqual({ [META.schedule]: ID, [META.occurrence]: AT });
    expect(resultMetadata(undefined, md)).toEqual({});
  });
});
