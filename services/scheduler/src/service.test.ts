import { ShroomsError, type CreateScheduleRequest } from '@shrooms/protocol';
import { createLogger } from '@shrooms/runtime';
import { describe, expect, it } from 'vitest';
import { SchedulerConfigSchema } from './config.js';
import { Engine } from './engine.js';
import { schedulerOps } from './service.js';
import { FakeGateways } from './testing/fake-gateway.js';
import { MemoryStore } from './testing/memory-store.js';

const log = createLogger('test', 'silent');
const NOW = Date.parse('2026-05-01T08:00:00Z');

function setup(env: Record<string, string> = {}) {
  const config = SchedulerConfigSchema.parse({ SHROOMS_MACHINE: 'home', ...env });
  const store = new MemoryStore();
  const engine = new Engine({ store, send: new FakeGateways().send, resolveGateway: async () => null, log, config, now: () => NOW });
  const ops = schedulerOps(store, engine, config, log, () => NOW);
  const req = (r: Partial<CreateScheduleRequest> = {}): CreateScheduleRequest => ({
    recipients: ['home/review'],
    prompt: 'check the roadmap',
    at: '2026-05-04T08:00',
    zone: 'Europe/Berlin',
    origin: { device: 'laptop', from: 'laptop/webapp' },
    ...r,
  });
  return { ops, req, store };
}

async function refusal(p: Promise<unknown>): Promise<ShroomsError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ShroomsError);
  return err as ShroomsError;
}

describe('create', () => {
  it('stores a weekly schedule with its first occurrence in the zone it names', async () => {
    const { ops, req } = setup();
    const { schedule, created } = await ops.create(req({ repeat: 'weekly:mon' }));
    expect(created).toBe(true);
    expect(schedule).toMatchObject({
      state: 'active',
      rule: { at: '2026-05-04T08:00', zone: 'Europe/Berlin', repeat: { freq: 'weekly', weekdays: ['mon'] } },
      next: { at: '2026-05-04T06:00:00.000Z', cursor: 0, seq: 0 },
      owner: { device: 'laptop', from: 'laptop/webapp' },
    });
  });

  it('takes the zone from the bracket form of at', async () => {
    const { ops, req } = setup();
    const { schedule } = await ops.create(req({ at: '2026-05-04T08:00[America/New_York]', zone: undefined }));
    expect(schedule.next?.at).toBe('2026-05-04T12:00:00.000Z');
  });

  it('refuses a local time without a zone with INVALID_PARAMS', async () => {
    const { ops, req } = setup();
    expect((await refusal(ops.create(req({ zone: undefined })))).key).toBe('INVALID_PARAMS');
  });

  it('refuses a one-shot time in the past with INVALID_PARAMS', async () => {
    const { ops, req } = setup();
    expect((await refusal(ops.create(req({ at: '2026-04-30T08:00' })))).key).toBe('INVALID_PARAMS');
  });

  it('starts a repeat that began in the past with its first occurrence from now on', async () => {
    const { ops, req } = setup();
    // 11:00 in Berlin is 09:00Z, an hour after now; 09:00 in Berlin (07:00Z) has passed today
    expect((await ops.create(req({ at: '2026-04-01T11:00', repeat: 'daily' }))).schedule.next?.at).toBe('2026-05-01T09:00:00.000Z');
    expect((await ops.create(req({ at: '2026-04-01T09:00', repeat: 'daily' }))).schedule.next?.at).toBe('2026-05-02T07:00:00.000Z');
  });

  it('refuses repeats closer than SCHEDULER_MIN_INTERVAL_MS with LIMIT_EXCEEDED', async () => {
    const { ops, req } = setup();
    expect((await refusal(ops.create(req({ repeat: 'every 30s' })))).key).toBe('LIMIT_EXCEEDED');
  });

  it('refuses a bad repeat and an unknown zone with INVALID_PARAMS', async () => {
    const { ops, req } = setup();
    expect((await refusal(ops.create(req({ repeat: 'fortnightly' })))).key).toBe('INVALID_PARAMS');
    expect((await refusal(ops.create(req({ zone: 'Europe/Atlantis' })))).key).toBe('INVALID_PARAMS');
  });

  it('returns the existing schedule when the same id is created again by the same device', async () => {
    const { ops, req } = setup();
    const first = await ops.create(req({ id: 'roadmap' }));
    const again = await ops.create(req({ id: 'roadmap', prompt: 'something else' }));
    expect(again).toEqual({ schedule: first.schedule, created: false });
    expect((await refusal(ops.create(req({ id: 'roadmap', origin: { device: 'pi5' } })))).key).toBe('INVALID_PARAMS');
  });

  it('refuses more schedules than LIMIT_SCHEDULES with LIMIT_EXCEEDED', async () => {
    const { ops, req } = setup({ LIMIT_SCHEDULES: '2' });
    await ops.create(req());
    await ops.create(req());
    expect((await refusal(ops.create(req()))).key).toBe('LIMIT_EXCEEDED');
  });
});

describe('list and cancel', () => {
  it('lists active schedules soonest first, filtered by recipient and owner', async () => {
    const { ops, req } = setup();
    const late = await ops.create(req({ at: '2026-06-01T08:00' }));
    const soon = await ops.create(req({ at: '2026-05-02T08:00', recipients: ['pi5/tests'], origin: { device: 'pi5' } }));
    expect((await ops.list({})).schedules.map((s) => s.id)).toEqual([soon.schedule.id, late.schedule.id]);
    expect((await ops.list({ recipient: 'pi5/tests' })).schedules.map((s) => s.id)).toEqual([soon.schedule.id]);
    expect((await ops.list({ from: 'laptop/webapp' })).schedules.map((s) => s.id)).toEqual([late.schedule.id]);
    expect((await ops.list({ id: late.schedule.id })).total).toBe(1);
  });

  it('cancels for the owner device, shows it under state canceled, and is idempotent', async () => {
    const { ops, req } = setup();
    const { schedule } = await ops.create(req());
    const canceled = await ops.cancel({ id: schedule.id, origin: { device: 'laptop', from: 'laptop/webapp' } });
    expect(canceled.schedule).toMatchObject({ state: 'canceled', canceledBy: 'laptop (laptop/webapp)' });
    expect((await ops.list({})).total).toBe(0);
    expect((await ops.list({ state: 'canceled' })).total).toBe(1);
    expect((await ops.cancel({ id: schedule.id, origin: { device: 'laptop' } })).schedule.state).toBe('canceled');
  });

  it('knows the owner device by its mesh name and by its machine name', async () => {
    const { ops, req } = setup();
    const { schedule } = await ops.create(req({ origin: { device: 'laptop.home' } }));
    expect((await ops.cancel({ id: schedule.id, origin: { device: 'laptop' } })).schedule.state).toBe('canceled');
  });

  it('lets a recipient machine cancel, and refuses any other device with NOT_ALLOWED', async () => {
    const { ops, req } = setup();
    const { schedule } = await ops.create(req());
    expect((await refusal(ops.cancel({ id: schedule.id, origin: { device: 'pi5' } }))).key).toBe('NOT_ALLOWED');
    expect((await ops.cancel({ id: schedule.id, origin: { device: 'home.mesh' } })).schedule.state).toBe('canceled');
  });

  it('answers SCHEDULE_NOT_FOUND for an unknown id', async () => {
    const { ops } = setup();
    expect((await refusal(ops.cancel({ id: 'nope', origin: { device: 'laptop' } }))).key).toBe('SCHEDULE_NOT_FOUND');
  });
});
