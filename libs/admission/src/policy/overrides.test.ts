import { jetstreamManager } from '@nats-io/jetstream';
import { Bucket } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS } from '@shrooms/protocol';
import { connectNats, createLogger, type Logger } from '@shrooms/runtime';
import { eventually, startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { PolicyOverrides } from './overrides.js';

/** The rules set through the control endpoint, on a real nats-server, as each admitter opens them. */
const log = createLogger('overrides-test', 'silent');
let nats: NatsWithConnection;
let conns: NatsConnection[];

beforeAll(async () => {
  nats = await startNatsWithConnection();
  conns = [nats.nc, await connectNats({ NATS_URL: nats.url }, log, 'second admitter')];
});
afterAll(async () => {
  await conns?.[1]?.close();
  await nats?.stop();
});

it('opens with the stored rules in hand, a removed one not among them, following with one consumer each', async () => {
  const first = await PolicyOverrides.open(conns[0]!, { replicas: 1, log });
  expect(first.rules.size).toBe(0);
  await first.set('home/review', { devices: ['laptop'] });
  await first.set('home/*', { devices: ['phone'] });
  await first.clear('home/*');

  const second = await PolicyOverrides.open(conns[1]!, { replicas: 1, log });
  expect([...second.rules]).toEqual([['home/review', { devices: ['laptop'] }]]);
  // Only the two watches: counting the stored rules with kv.keys() left a consumer on the server
  // for five minutes after each open.
  const jsm = await jetstreamManager(conns[0]!);
  expect(await jsm.consumers.list(`KV_${BUCKETS.guardPolicy}`).next()).toHaveLength(2);
  first.close();
  second.close();
});

it('goes on following the rules when the bucket holds a key that does not decode, as one written by hand', async () => {
  const first = await PolicyOverrides.open(conns[0]!, { replicas: 1, log });
  // What an operator reading "key M.S" may write with the nats CLI: `_` begins an escape, so this
  // key stands for no session pattern.
  await first.kv.put('lab.my_session', JSON.stringify({ devices: ['laptop'] }));
  // Opened with the key among the stored rules, and following it as a change.
  const second = await PolicyOverrides.open(conns[1]!, { replicas: 1, log });
  await first.set('lab/from-first', { devices: ['phone'] });
  await second.set('lab/from-second', { devices: ['tablet'] });
  await eventually(() => second.rules.has('lab/from-first') && first.rules.has('lab/from-second'));
  expect([...first.rules.keys()].filter((p) => p.startsWith('lab/')).sort()).toEqual(['lab/from-first', 'lab/from-second']);
  first.close();
  second.close();
});

it('warns once about a key that does not decode, however often it is written', async () => {
  const own = createLogger('overrides-test', 'silent');
  const warn = vi.spyOn(own, 'warn');
  const rules = await PolicyOverrides.open(conns[0]!, { replicas: 1, log: own });
  await rules.kv.put('lab.twice_over', '{}');
  await rules.kv.put('lab.twice_over', JSON.stringify({ devices: ['laptop'] }));
  // Written after them: once it is in, the watch has been brought both.
  await rules.kv.put('lab.marker', JSON.stringify({ devices: ['laptop'] }));
  await eventually(() => rules.rules.has('lab/marker'));
  expect(warnedKeys(warn).filter((k) => k === 'lab.twice_over')).toHaveLength(1);
  rules.close();
});

it('follows the rules again after its watch ends by itself, a rule revoked meanwhile dropped', async () => {
  const other = await PolicyOverrides.open(conns[1]!, { replicas: 1, log });
  await other.set('desk/kept', { devices: ['laptop'] });
  await other.set('desk/revoked', { devices: ['phone'] });
  const { rules, endWatch } = await openEndable(conns[0]!, log);
  expect(rules.rules.has('desk/revoked')).toBe(true);
  endWatch();
  await other.clear('desk/revoked');
  await other.set('desk/added', { devices: ['tablet'] });
  await eventually(() => rules.rules.has('desk/added') && !rules.rules.has('desk/revoked'));
  expect(rules.rules.get('desk/kept')).toEqual({ devices: ['laptop'] });
  rules.close();
  other.close();
});

it('drops a rule that left no trace in the bucket while its watch was down', async () => {
  const other = await PolicyOverrides.open(conns[1]!, { replicas: 1, log });
  await other.set('desk/purged', { devices: ['phone'] });
  const { rules, endWatch } = await openEndable(conns[0]!, log);
  expect(rules.rules.has('desk/purged')).toBe(true);
  endWatch();
  // Purged from the stream, as `nats stream purge --subject` does: no delete marker is left to bring.
  const jsm = await jetstreamManager(conns[1]!);
  await jsm.streams.purge(`KV_${BUCKETS.guardPolicy}`, { filter: `$KV.${BUCKETS.guardPolicy}.desk.purged` });
  await other.set('desk/after-purge', { devices: ['tablet'] });
  await eventually(() => rules.rules.has('desk/after-purge'));
  expect(rules.rules.has('desk/purged')).toBe(false);
  rules.close();
  other.close();
});

/**
 * Opens the rules with a way to end their watch as it ends by itself (its consumer gone): stopped
 * from below, not through `close`.
 */
async function openEndable(nc: NatsConnection, logger: Logger): Promise<{ rules: PolicyOverrides; endWatch: () => void }> {
  const watch = vi.spyOn(Bucket.prototype, 'watch');
  try {
    const rules = await PolicyOverrides.open(nc, { replicas: 1, log: logger });
    const iter = await watch.mock.results[0]!.value;
    return { rules, endWatch: () => iter.stop() };
  } finally {
    watch.mockRestore();
  }
}

function warnedKeys(warn: { mock: { calls: unknown[][] } }): unknown[] {
  return warn.mock.calls.map(([obj]) => (obj as { key?: unknown } | undefined)?.key);
}
