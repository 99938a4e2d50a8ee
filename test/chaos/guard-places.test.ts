/**
 * kill -9 of a guard replica holding loop-guard places reserved ahead (docs/reliability.md, "The
 * loop guard: exact, with places reserved ahead"). A device streams new tasks to one session; the
 * first replica admits a dozen alone and so holds places; a second starts; the first is killed with
 * its places in the stored window. Then:
 *
 *   - the window never admits more than its limit: the dead replica's places stay counted (a place
 *     may hold a task it admitted and never wrote), so the survivor refuses once the window is full;
 *   - the window shows them for what they are: counted, `reserved`, not listed as task ids;
 *   - they leave the window at their time, like any entry, and the device is admitted again.
 *
 * Assertions are on counts; the window's length only bounds how long the last step waits.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { askGuard, guardControl, guardRefusal } from '@shrooms/client';
import { BUCKETS, keys } from '@shrooms/protocol';
import { CLI, eventually, runTs, startNatsServer, type NatsServerHandle, type ServiceProcess } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A short window, so its places (timed a lease ahead: a tenth of it, at most 1 s) leave it within the
 * test, and long enough that nothing leaves it before the survivor has filled it (a few seconds).
 */
const WINDOW_MS = 15_000;
const LIMIT = 30;
const target = { device: 'laptop.home', machine: 'homeserver', session: 'stream' };

let server: NatsServerHandle;
let nc: NatsConnection;
const guards: ServiceProcess[] = [];

function startGuard(): ServiceProcess {
  const g = runTs(
    CLI,
    ['guard'],
    {
      NATS_URL: server.url,
      SHROOMS_MACHINE: 'guardhost',
      GUARD_RATE_MAX: String(LIMIT),
      GUARD_RATE_WINDOW_MS: String(WINDOW_MS),
      GUARD_BUDGET_MAX: '0',
      LOG_LEVEL: 'info',
    },
    { built: true },
  );
  guards.push(g);
  return g;
}

const ask = (taskId: string) =>
  askGuard(nc, { machine: target.machine, session: target.session, origin: { device: target.device }, taskId }, { timeoutMs: 20_000 });

const counters = async () =>
  (await guardControl(nc, { action: 'counters.get', ...target }, 10_000)) as { count: number; ids: string[]; reserved: number };

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connect({ servers: server.url });
});

afterAll(async () => {
  await nc?.close();
  for (const g of guards) await g.kill();
  await server?.stop();
});

describe('kill -9 of a guard replica holding places reserved ahead', () => {
  it('never admits past the limit; the dead replica’s places stay counted, shown apart, until they leave the window', async () => {
    const first = startGuard();
    await first.waitFor(/guard ready/, 60_000);
    // The first replica alone: a dozen new tasks one after another, so it reserves places ahead.
    const admitted: string[] = [];
    let n = 0;
    const next = async () => {
      const id = `${target.session}:t${n++}`;
      const d = await ask(id);
      if (d.admit) admitted.push(id);
      return d;
    };
    for (let i = 0; i < 12; i++) expect((await next()).admit).toBe(true);
    const window = await new Kvm(nc).open(BUCKETS.guard);
    const key = keys.rate(target.device, target.machine, target.session);
    expect((await window.get(key))?.string()).toContain('"~place:');

    const second = startGuard();
    await second.waitFor(/guard ready/, 60_000);
    await first.kill();

    // The survivor admits until the window is full — the dead replica's places counted — and no further.
    const refusals = [];
    for (let i = 0; i < LIMIT; i++) {
      const d = await next();
      if (!d.admit) refusals.push(guardRefusal(d)?.key);
    }
    expect(admitted.length).toBeLessThanOrEqual(LIMIT);
    expect(refusals.length).toBeGreaterThan(0);
    expect(new Set(refusals)).toEqual(new Set(['LOOP_GUARD']));
    const full = await counters();
    expect(full.reserved).toBeGreaterThan(0);
    expect(full.count).toBe(full.ids.length + full.reserved);
    expect(full.count).toBe(LIMIT);
    // Every task the survivor admitted is named; those the dead one admitted are named or in a place.
    expect(full.ids.every((id) => admitted.includes(id))).toBe(true);
    expect(admitted.length - full.ids.length).toBeLessThanOrEqual(full.reserved);

    // Places leave the window at their time like any entry: the device is admitted again.
    await eventually(async () => (await counters()).count === 0, WINDOW_MS * 4, 250);
    expect((await next()).admit).toBe(true);
  });
});
