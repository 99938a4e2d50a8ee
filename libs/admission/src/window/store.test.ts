import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connectNats, createLogger } from '@shrooms/runtime';
import { startNatsServer, type NatsServerHandle } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGE_ID_MAX_LENGTH, NAME_MAX_LENGTH, formatTaskId, isValidMessageId, isValidName } from '@shrooms/protocol';
import { REMEMBERED_KEYS, WindowStore, preciseNow } from './store.js';
import { WINDOW_MAX_ENTRIES, decodeWindow } from './window.js';

const log = createLogger('guard-test', 'silent');
const spec = { max: 30, windowMs: 60 * 60 * 1000 };
const later = () => Date.now() + 30_000;

describe('WindowStore (JetStream KV, compare-and-set)', () => {
  let server: NatsServerHandle;
  let conns: NatsConnection[];
  let kvs: KV[];

  beforeAll(async () => {
    server = await startNatsServer();
    conns = await Promise.all([
      connectNats({ NATS_URL: server.url }, log, 'guard-test'),
      connectNats({ NATS_URL: server.url }, log, 'guard-test'),
    ]);
    // One after the other: two creating one stream at once is a race nats-server 2.9 can lose
    // ("subjects overlap"); openAdmission retries it, this setup need not.
    kvs = [];
    for (const nc of conns) kvs.push(await new Kvm(nc).create('guard_test', { history: 1 }));
  });
  afterAll(async () => {
    await Promise.all(conns.map((nc) => nc.close()));
    await server.stop();
  });

  it('admits exactly the maximum from 100 concurrent reserves through two stores', async () => {
    const stores = kvs.map((kv) => new WindowStore(kv, { log }));
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => stores[i % 2]!.reserve('exact', `t${i}`, spec, later())));
    expect(results.filter((r) => r.ok && r.counted)).toHaveLength(30);
    const state = await stores[0]!.inspect('exact', spec);
    expect(state.count).toBe(30);
    expect(new Set(state.ids).size).toBe(30);
    const refused = results.find((r) => !r.ok);
    expect(refused && !refused.ok && refused.retryAfterMs).toBeGreaterThan(0);
  });

  it('settles a burst for one window in one batch: a read, one write for all it admits, a read for the rest', async () => {
    const store = new WindowStore(kvs[0]!, { log });
    const before = conns[0]!.stats().outMsgs;
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => store.reserve('burst', `t${i % 36}`, spec, later())));
    expect(conns[0]!.stats().outMsgs - before).toBe(3);
    // In the order asked: the first 30 ids counted, their repeats admitted again, the rest refused.
    expect(results.map((r) => (r.ok ? (r.counted ? 'counted' : 'again') : 'full'))).toEqual([
      ...Array<string>(30).fill('counted'),
      ...Array<string>(6).fill('full'),
      ...Array<string>(4).fill('again'),
    ]);
    expect((await store.inspect('burst', spec)).ids).toEqual(Array.from({ length: 30 }, (_, i) => `t${i}`));
  });

  it('counts a task id once however often and wherever it is reserved', async () => {
    const stores = kvs.map((kv) => new WindowStore(kv, { log }));
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.reserve('same', 'one-task', spec, later())));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.filter((r) => r.ok && r.counted)).toHaveLength(1);
    expect((await stores[0]!.inspect('same', spec)).count).toBe(1);
  });

  it('admits again once the oldest entry has left the window', async () => {
    let now = 1_000_000;
    const store = new WindowStore(kvs[0]!, { log, now: () => now });
    const small = { max: 2, windowMs: 1000 };
    expect((await store.reserve('slide', 'a', small, later())).ok).toBe(true);
    now += 400;
    expect((await store.reserve('slide', 'b', small, later())).ok).toBe(true);
    const refused = await store.reserve('slide', 'c', small, later());
    expect(refused).toEqual({ ok: false, count: 2, retryAfterMs: 600 });
    now += 600;
    expect(await store.reserve('slide', 'c', small, later())).toEqual({ ok: true, counted: true, count: 2 });
  });

  it('gives a place back', async () => {
    const store = new WindowStore(kvs[0]!, { log });
    await store.reserve('give', 'a', spec, later());
    await store.reserve('give', 'b', spec, later());
    await store.release('give', 'a', later());
    expect((await store.inspect('give', spec)).ids).toEqual(['b']);
  });

  it('starts a window again after a reset', async () => {
    const store = new WindowStore(kvs[0]!, { log });
    const one = { max: 1, windowMs: 60_000 };
    await store.reserve('reset', 'a', one, later());
    expect((await store.reserve('reset', 'b', one, later())).ok).toBe(false);
    await store.reset('reset');
    expect((await store.reserve('reset', 'b', one, later())).ok).toBe(true);
  });

  it('adds to the window it wrote last with one write and no read', async () => {
    const store = new WindowStore(kvs[0]!, { log });
    await store.reserve('remembered', 'a', spec, later());
    const before = conns[0]!.stats().outMsgs;
    expect(await store.reserve('remembered', 'b', spec, later())).toEqual({ ok: true, counted: true, count: 2 });
    expect(conns[0]!.stats().outMsgs - before).toBe(1);
    expect((await store.inspect('remembered', spec)).ids).toEqual(['a', 'b']);
  });

  it('counts exactly when the window it remembers was replaced by another replica', async () => {
    const [mine, other] = kvs.map((kv) => new WindowStore(kv, { log }));
    const three = { max: 3, windowMs: 60_000 };
    await mine!.reserve('stale', 'a', three, later());
    await mine!.reserve('stale', 'b', three, later());
    expect(await other!.reserve('stale', 'c', three, later())).toEqual({ ok: true, counted: true, count: 3 });
    // `mine` remembers two entries; the stored window holds three, so the fourth is refused.
    expect(await mine!.reserve('stale', 'd', three, later())).toMatchObject({ ok: false, count: 3 });
    await other!.reset('stale');
    // `mine` remembers the full window; the reset emptied it, so it admits again.
    expect(await mine!.reserve('stale', 'e', three, later())).toEqual({ ok: true, counted: true, count: 1 });
    expect((await other!.inspect('stale', three)).ids).toEqual(['e']);
  });

  it('reads again before it answers "already admitted" from the window it remembers', async () => {
    const [mine, other] = kvs.map((kv) => new WindowStore(kv, { log }));
    await mine!.reserve('given-back', 'a', spec, later());
    await other!.release('given-back', 'a', later());
    expect(await mine!.reserve('given-back', 'a', spec, later())).toEqual({ ok: true, counted: true, count: 1 });
  });

  it('answers a flood of refusals with one read, yet sees a reset made before a request arrived', async () => {
    const [mine, other] = kvs.map((kv) => new WindowStore(kv, { log }));
    const one = { max: 1, windowMs: 60_000 };
    await other!.reserve('flood', 'a', one, later());
    const arrived = preciseNow();
    const sent = () => conns[0]!.stats().outMsgs;
    const before = sent();
    // Arrived together: the first reads the full window, the others take that read's answer.
    const refusals = await Promise.all(['b', 'c', 'd', 'e'].map((id) => mine!.reserve('flood', id, one, later(), arrived)));
    expect(refusals.map((r) => r.ok)).toEqual([false, false, false, false]);
    expect(sent() - before).toBe(1);
    // A request that arrives after a reset elsewhere is not answered from the read before it.
    await other!.reset('flood');
    expect(await mine!.reserve('flood', 'f', one, later(), preciseNow())).toEqual({ ok: true, counted: true, count: 1 });
  });

  it('admits a steady stream from places reserved ahead: far fewer writes than admits, every id counted', async () => {
    const store = new WindowStore(kvs[0]!, { log });
    const big = { max: 1_000, windowMs: 60 * 60 * 1000 };
    const before = conns[0]!.stats().outMsgs;
    const ids = Array.from({ length: 60 }, (_, i) => `s${i}`);
    for (const id of ids) expect(await store.reserve('steady', id, big, later())).toMatchObject({ ok: true, counted: true });
    expect(conns[0]!.stats().outMsgs - before).toBeLessThan(20);
    // A place is no way around the deadline.
    await expect(store.reserve('steady', 'late', big, Date.now() - 1)).rejects.toMatchObject({ key: 'GUARD_UNAVAILABLE' });
    // Places not given are dropped and the given ones hold their ids once inspected (or at the lease's end).
    const state = await store.inspect('steady', big);
    expect(state.count).toBe(60);
    expect([...state.ids].sort()).toEqual([...ids].sort());
  });

  it('admits exactly the maximum when another store holds places ahead, waiting for their lease', async () => {
    const stores = kvs.map((kv) => new WindowStore(kv, { log }));
    const stream = async (store: WindowStore, name: string, n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await store.reserve('two-streams', `${name}${i}`, spec, later()));
      return out;
    };
    // The first stops early, holding places it will not use: the other waits for their lease
    // before it refuses, so the window still fills to its maximum, and never past it.
    const first = await stream(stores[0]!, 'a', 5);
    const stored = decodeWindow((await kvs[1]!.get('two-streams'))!.string());
    expect(stored.filter((e) => e.id.startsWith('~place:')).length).toBeGreaterThan(2);
    const results = [...first, ...(await stream(stores[1]!, 'b', 40))];
    expect(results.filter((r) => r.ok && r.counted)).toHaveLength(30);
    const state = await stores[1]!.inspect('two-streams', spec);
    expect(state.count).toBe(30);
    expect(state.reserved).toBe(0);
  });

  it("counts another store's places in an inspected window without listing them as tasks", async () => {
    const stores = kvs.map((kv) => new WindowStore(kv, { log }));
    for (let i = 0; i < 5; i++) await stores[0]!.reserve('shown', `p${i}`, spec, later());
    const stored = decodeWindow((await kvs[1]!.get('shown'))!.string());
    const places = stored.filter((e) => e.id.startsWith('~place:')).length;
    expect(places).toBeGreaterThan(0);
    // The other store sees the places counted (they are taken until given back) but names only tasks.
    const state = await stores[1]!.inspect('shown', spec);
    expect(state.reserved).toBe(places);
    expect(state.count).toBe(stored.length);
    expect(state.ids).toEqual(stored.filter((e) => !e.id.startsWith('~place:')).map((e) => e.id));
    // The store holding them writes them out before it answers: nothing reserved is left to show.
    const own = await stores[0]!.inspect('shown', spec);
    expect(own).toMatchObject({ count: 5, reserved: 0 });
    expect([...own.ids].sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
  });

  it('gives back the places it did not use when their lease ends', async () => {
    const store = new WindowStore(kvs[0]!, { log });
    const short = { max: 100, windowMs: 2_000 };
    for (let i = 0; i < 10; i++) await store.reserve('lease', `l${i}`, short, later());
    const stored = async () => decodeWindow((await kvs[1]!.get('lease'))!.string()).map((e) => e.id);
    expect((await stored()).some((id) => id.startsWith('~place:'))).toBe(true);
    // A lease is a tenth of the window (200 ms); the write after it drops the places.
    await new Promise((r) => setTimeout(r, 400));
    expect((await stored()).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `l${i}`).sort());
  });

  it('gives back its places when it closes, and reserves none after', async () => {
    const store = new WindowStore(kvs[0]!, { log });
    for (let i = 0; i < 10; i++) await store.reserve('closing', `c${i}`, spec, later());
    const stored = async () => decodeWindow((await kvs[1]!.get('closing'))!.string()).map((e) => e.id);
    expect((await stored()).some((id) => id.startsWith('~place:'))).toBe(true);
    await store.close();
    expect((await stored()).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `c${i}`).sort());
    for (let i = 10; i < 15; i++) await store.reserve('closing', `c${i}`, spec, later());
    expect((await stored()).filter((id) => id.startsWith('~place:'))).toEqual([]);
  });

  it('admits no more than the maximum when more keys than it remembers come by while it holds places given ahead', async () => {
    let now = 5_000_000;
    const store = new WindowStore(kvs[0]!, { log, now: () => now });
    const busy = async (id: string) => {
      now += 1;
      return store.reserve('busy', id, spec, later());
    };
    const results = [await busy('k0')];
    // Every other key it remembers comes after this one.
    await Promise.all(Array.from({ length: REMEMBERED_KEYS - 1 }, (_, i) => store.reserve(`crowd-${i}`, 'x', spec, later())));
    // 1 ms after the first: the write reserves places ahead, and the next three are given them, unwritten.
    results.push(await busy('k1'));
    for (const id of ['k2', 'k3', 'k4']) results.push(await busy(id));
    expect(decodeWindow((await kvs[1]!.get('busy'))!.string()).filter((e) => e.id.startsWith('~place:')).length).toBeGreaterThan(3);
    // One key more than it remembers, within the places' lease.
    await store.reserve('crowd-last', 'x', spec, later());
    for (let i = 5; i < 40; i++) results.push(await busy(`k${i}`));
    expect(results.filter((r) => r.ok && r.counted)).toHaveLength(30);
    // Each one counted, with its id (those given places are timed at the places' lease: sorted here).
    const state = await store.inspect('busy', spec);
    expect([...state.ids].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `k${i}`).sort());
  });

  it('writes nothing and fails closed once the deadline has passed', async () => {
    const store = new WindowStore(kvs[0]!, { log });
    await expect(store.reserve('late', 'a', spec, Date.now() - 1)).rejects.toMatchObject({ key: 'GUARD_UNAVAILABLE' });
    expect((await store.inspect('late', spec)).count).toBe(0);
  });

  it('refuses to guess when a stored value is not a window', async () => {
    await kvs[0]!.put('garbage', 'not a window');
    const store = new WindowStore(kvs[0]!, { log });
    await expect(store.reserve('garbage', 'a', spec, later())).rejects.toMatchObject({ key: 'INTERNAL' });
  });

  it('holds a window at its largest limit of the longest task ids in one NATS message', async () => {
    // A 64-character session and 128-character message ids of 3-byte characters: the most bytes a
    // task id the gateway makes can take in a window's value.
    const session = 's'.repeat(NAME_MAX_LENGTH);
    const id = (i: number) => formatTaskId(session, `${i}`.padStart(6, '0') + '€'.repeat(MESSAGE_ID_MAX_LENGTH - 6));
    expect(isValidName(session) && isValidMessageId(id(0).slice(session.length + 1))).toBe(true);
    const store = new WindowStore(kvs[0]!, { log });
    const big = { max: WINDOW_MAX_ENTRIES, windowMs: spec.windowMs };
    const results = await Promise.all(
      Array.from({ length: WINDOW_MAX_ENTRIES + 1 }, (_, i) => store.reserve('largest', id(i), big, later())),
    );
    expect(results.filter((r) => r.ok && r.counted)).toHaveLength(WINDOW_MAX_ENTRIES);
    expect(results.at(-1)).toMatchObject({ ok: false, count: WINDOW_MAX_ENTRIES });
    const stored = await kvs[1]!.get('largest');
    expect(stored!.value.length).toBeLessThan(conns[0]!.info!.max_payload);
  });
});
