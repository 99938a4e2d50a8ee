import { jetstreamManager } from '@nats-io/jetstream';
import { BUCKETS, keys } from '@shrooms/protocol';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildSchedule } from './create.js';
import { ScheduleStore } from './store.js';

/** ScheduleStore on a real nats-server: what a rescan (`all`) reads, and what it leaves behind. */
const limits = { LIMIT_RECIPIENTS: 10, LIMIT_TEXT_BYTES: 65_536, SCHEDULER_MIN_INTERVAL_MS: 1000 };
let nats: NatsWithConnection;
let store: ScheduleStore;

beforeAll(async () => {
  nats = await startNatsWithConnection();
  store = await ScheduleStore.open(nats.nc);
});
afterAll(() => nats?.stop());

const schedule = (id: string) =>
  buildSchedule(
    { recipients: ['home/review'], prompt: `check ${id}`, at: '2030-05-01T08:00:10Z', origin: { device: 'laptop', from: 'laptop/webapp' } },
    limits,
    Date.parse('2030-05-01T08:00:00Z'),
    id,
  );

it('reads every schedule as it stands, and no removed one or other value, without leaving a consumer on the server', async () => {
  for (const id of ['a1', 'b2', 'c3', 'd4']) expect(await store.create(schedule(id))).not.toBeNull();
  const gone = await store.get('c3');
  await store.remove('c3', gone!.revision);
  await store.kv.delete('d4');
  await store.kv.put('_health.home.scheduler', JSON.stringify({ at: new Date().toISOString(), pid: 1 }));
  await store.kv.put('by-hand', 'not json');
  const changed = await store.update('b2', (s) => ({ ...s, state: 'canceled' }));

  // The engine reads the bucket every SCHEDULER_RESCAN_MS, forever.
  for (let i = 0; i < 5; i++) {
    const all = await store.all();
    expect(all.map((s) => s.schedule.id).sort()).toEqual(['a1', 'b2']);
    expect(all.find((s) => s.schedule.id === 'b2')).toEqual(changed);
  }
  // kv.keys() left one consumer per listing, each deleted by the server only five minutes later.
  const jsm = await jetstreamManager(nats.nc);
  expect(await jsm.consumers.list(`KV_${BUCKETS.schedules}`).next()).toEqual([]);
});

it('reads a big bucket at most 64 values at a time', async () => {
  for (let i = 0; i < 150; i++) expect(await store.create(schedule(`many-${i}`))).not.toBeNull();
  const get = store.kv.get.bind(store.kv);
  let inFlight = 0;
  let most = 0;
  store.kv.get = async (...args: Parameters<typeof get>) => {
    most = Math.max(most, ++inFlight);
    try {
      return await get(...args);
    } finally {
      inFlight--;
    }
  };
  try {
    const all = await store.all();
    expect(all.filter((s) => s.schedule.id.startsWith('many-'))).toHaveLength(150);
    expect(most).toBe(64);
  } finally {
    store.kv.get = get;
  }
});

it('lists the machines said to run a scheduler, and no schedule of them', async () => {
  const key = keys.schedulerMachine('home');
  await store.announce('home', 'home-1');
  expect((await store.kv.get(key))?.json()).toMatchObject({ machine: 'home', replica: 'home-1' });
  const found = await store.scan();
  expect(found.schedulers).toContain('home');
  expect(found.schedules.some((s) => s.schedule.id.includes('home'))).toBe(false);
  // An operator removed it (`nats kv del`): a scan no longer lists it, and finds its marker.
  await store.kv.delete(key);
  const after = await store.scan();
  expect(after.schedulers).not.toContain('home');
  expect(after.markers.map((m) => m.key)).toContain(key);
});

it('takes removal markers out of the stream, and keeps a schedule written under the same id after one', async () => {
  const jsm = await jetstreamManager(nats.nc);
  const onKey = async (id: string) =>
    (await jsm.streams.info(`KV_${BUCKETS.schedules}`, { subjects_filter: `$KV.${BUCKETS.schedules}.${keys.schedule(id)}` })).state
      .subjects ?? {};
  for (const id of ['gone-1', 'gone-2', 'back']) {
    const s = await store.create(schedule(id));
    await store.remove(id, s!.revision);
  }
  const { markers } = await store.scan();
  expect(markers.map((m) => m.key).sort()).toEqual(expect.arrayContaining(['back', 'gone-1', 'gone-2']));
  // `back` is scheduled again between the scan and the sweep.
  const back = await store.create(schedule('back'));
  await store.dropMarkers(markers);
  expect(await onKey('gone-1')).toEqual({});
  expect(await onKey('gone-2')).toEqual({});
  expect(Object.values(await onKey('back'))).toEqual([1]);
  expect(await store.get('back')).toEqual(back);
  expect((await store.scan()).markers).toEqual([]);
});
