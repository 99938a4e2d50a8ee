// The watchdog's own bookkeeping, against a stand-in for the bridge (the ledger read made slow on
// purpose, which a real ledger is only under load); test/e2e/watchdog.test.ts drives it for real.
import { META } from '@shrooms/protocol';
import type { Stored } from '@shrooms/ledger';
import { createLogger } from '@shrooms/runtime';
import { expect, it } from 'vitest';
import type { Bridge } from '../bridge/bridge.js';
import { Watchdog } from './watchdog.js';

function standIn(readMs: number) {
  const metadata: Record<string, unknown> = { [META.createdAt]: new Date(0).toISOString() };
  const notices: Record<string, unknown>[] = [];
  const reminded: string[] = [];
  const stored = () =>
    ({
      entry: { task: { id: 'dozy:t1', contextId: 'c', status: { state: 'TASK_STATE_WORKING' }, metadata: { ...metadata } } },
    }) as unknown as Stored;
  const bridge = {
    log: createLogger('test', 'silent'),
    quiet: () => ({
      harness: 'idle',
      remindersStopped: false,
      backgroundJobs: 0,
      lastActivityAt: 0,
      lastWorkerLine: '',
      current: { key: 'k1', taskId: 'dozy:t1' },
    }),
    // As a ledger read: the value as it was when asked, its answer later.
    read: async () => {
      const asked = stored();
      await new Promise((r) => setTimeout(r, readMs));
      return asked;
    },
    annotate: async (_key: string, md: Record<string, unknown>) => {
      Object.assign(metadata, md);
      return stored();
    },
    notify: (_kind: string, body: Record<string, unknown>) => void notices.push(body),
    remind: async (_key: string, text: string) => void reminded.push(text),
    release: async () => {},
  } as unknown as Bridge;
  return { bridge, notices, reminded, metadata };
}

it('reminds once when a tick meets the next one still waiting on the ledger', async () => {
  const s = standIn(30);
  const dog = new Watchdog(s.bridge, { firstMs: 100, ladderMs: [100], maxPerHour: 10, hourMs: 3_600_000 }, 10);
  const now = 1_000;
  await Promise.all([dog.tick(now), dog.tick(now + 10), dog.tick(now + 20)]);
  expect(s.notices.map((n) => n.nudge)).toEqual([1]);
  expect(s.reminded).toHaveLength(1);
  expect(s.metadata[META.nudges]).toBe(1);
  // The next tick, once the first is done, goes on along the ladder.
  await dog.tick(now + 500);
  expect(s.notices.map((n) => n.nudge)).toEqual([1, 2]);
});
