import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/nats-core';
import { startNatsWithConnection, eventually, idleSignal, type NatsWithConnection } from '@shrooms/testing';
import { SignalField } from './signals.js';

let nats: NatsWithConnection;
let nc: NatsConnection;
beforeAll(async () => {
  nats = await startNatsWithConnection();
  nc = nats.nc;
});
afterAll(async () => {
  await nats?.stop();
});

const signal = (session: string) => idleSignal('box', session);

it('lets a signal nobody renews fade by itself, while a renewed one stays', async () => {
  const field = await SignalField.open(nc, { ttlMs: 1000 });
  await field.renew(signal('fading'));
  await field.renew(signal('kept'));
  const first = await field.get('box', 'fading');
  expect(first?.strength).toBeGreaterThan(0.5);
  const timer = setInterval(() => void field.renew(signal('kept')), 200);
  try {
    await eventually(async () => (await field.get('box', 'fading')) === null, 10_000);
    const live = await field.list('box');
    expect(live.map((s) => s.session)).toEqual(['kept']);
  } finally {
    clearInterval(timer);
  }
});

it('weakens a signal as it ages', async () => {
  const field = await SignalField.open(nc, { ttlMs: 1000 });
  await field.renew(signal('aging'));
  const now = Date.now();
  const fresh = await field.get('box', 'aging', now);
  const later = await field.get('box', 'aging', now + 600);
  expect(later!.strength).toBeLessThan(fresh!.strength);
});

it('lists every signal once and ends while one is renewed without pause', async () => {
  // kv.keys() follows writes: a key renewed faster than the listing reads kept it going (a busy
  // machine's unit run timed out here). The listing is a snapshot of the keys now.
  const field = await SignalField.open(nc, { ttlMs: 60_000 });
  for (let i = 0; i < 20; i++) await field.renew(signal(`quiet-${i}`));
  let stop = false;
  const hot = (async () => {
    while (!stop) await field.renew(signal('hot'));
  })();
  try {
    await eventually(async () => (await field.get('box', 'hot')) !== null);
    const listed = (await field.list('box')).map((s) => s.session);
    expect(listed.filter((s) => s === 'hot')).toHaveLength(1);
    expect(listed.filter((s) => s.startsWith('quiet-'))).toHaveLength(20);
  } finally {
    stop = true;
    await hot;
  }
});

it('answers a followed live signal from memory, and reads one it has not seen or that faded', async () => {
  const field = await SignalField.open(nc, { ttlMs: 60_000 });
  const stop = await field.follow('box');
  try {
    await field.renew(signal('followed'));
    // The watch brings the renewal; from then on the look-up is no read.
    await eventually(async () => {
      const before = field.reads;
      return (await field.get('box', 'followed')) !== null && field.reads === before;
    });
    const before = field.reads;
    expect((await field.get('box', 'followed'))?.session).toBe('followed');
    expect(field.reads).toBe(before);
    // A session the watch does not know is read, not taken for absent.
    expect(await field.get('box', 'nobody')).toBeNull();
    expect(field.reads).toBe(before + 1);
    // Faded in memory: read again (and faded there too).
    expect(await field.get('box', 'followed', Date.now() + 60_000)).toBeNull();
    expect(field.reads).toBe(before + 2);
    // Withdrawn: memory drops it with the watch's delete.
    await field.withdraw('box', 'followed');
    await eventually(async () => (await field.get('box', 'followed')) === null);
  } finally {
    stop();
  }
  // Stopped: every look-up reads again.
  await field.renew(signal('after'));
  const before = field.reads;
  expect((await field.get('box', 'after'))?.session).toBe('after');
  expect(field.reads).toBe(before + 1);
});

it('lets exactly one of several claims on the revision read through, on a new key and on a withdrawn one', async () => {
  const field = await SignalField.open(nc, { ttlMs: 30_000 });
  const empty = await field.read('box', 'claimed');
  expect(empty).toEqual({ signal: null, revision: 0 });
  const claims = (revision: number) =>
    Promise.all([1, 2, 3, 4].map((pid) => field.claim({ ...signal('claimed'), instance: { host: 'box', pid } }, revision)));
  const first = await claims(0);
  expect(first.filter(Boolean)).toHaveLength(1);
  const winner = await field.read('box', 'claimed');
  expect(winner.signal?.instance?.pid).toBe(first.indexOf(true) + 1);

  await field.withdraw('box', 'claimed');
  const withdrawn = await field.read('box', 'claimed');
  expect(withdrawn.signal).toBeNull();
  expect(withdrawn.revision).toBeGreaterThan(winner.revision);
  // A claim on a revision already passed is refused too.
  expect(await field.claim(signal('claimed'), winner.revision)).toBe(false);
  expect((await claims(withdrawn.revision)).filter(Boolean)).toHaveLength(1);
});
