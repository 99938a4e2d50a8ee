import { expect, it } from 'vitest';
import type { Task, TaskState } from '@shrooms/protocol';
import { TaskIndex } from './task-index.js';

const task = (i: number, state: TaskState = 'TASK_STATE_COMPLETED'): Task => ({
  id: `s:${i}`,
  contextId: `c${i % 3}`,
  status: { state, timestamp: new Date(1_700_000_000_000 + i).toISOString() },
});

/** The page with no filter, walked the long way (every task), as the filtered path does. */
function slowPage(index: TaskIndex, pageSize: number, before?: number) {
  // A status filter that matches every task takes the full walk.
  const all = index.page('s', { pageSize, before, statusAfter: 0 });
  return all;
}

it('gives the same unfiltered pages, totals and cursors as a walk over every task', () => {
  const index = new TaskIndex();
  for (let i = 0; i < 3000; i++) index.upsertTask(`k${i}`, 's', task(i, 'TASK_STATE_WORKING'));
  // Tombstones: half the tasks change state (move to the front), some are removed.
  for (let i = 0; i < 3000; i += 2) index.upsertTask(`k${i}`, 's', task(i + 5000));
  for (let i = 1; i < 3000; i += 7) index.remove(`k${i}`, 's');
  for (const pageSize of [1, 50, 100]) {
    let before: number | undefined;
    let pages = 0;
    do {
      const fast = index.page('s', { pageSize, before });
      expect(fast).toEqual(slowPage(index, pageSize, before));
      before = fast.next;
      pages++;
    } while (before !== undefined && pages < 40);
  }
  expect(index.page('s', { pageSize: 50 }).total).toBe(index.count('s'));
});

it('answers an empty session and a page larger than the session', () => {
  const index = new TaskIndex();
  expect(index.page('s', { pageSize: 10 })).toEqual({ keys: [], total: 0 });
  for (let i = 0; i < 3; i++) index.upsertTask(`k${i}`, 's', task(i));
  expect(index.page('s', { pageSize: 10 })).toEqual({ keys: ['k2', 'k1', 'k0'], total: 3 });
});

it('keeps the later of two views with the same entry version (two writes from one version both stored)', () => {
  // The expiry sweep's CANCELED (revision 3) and the bridge's WORKING (revision 4) were both written
  // from version 2; the watch brings both, then the sweep's own view of its write arrives last.
  const index = new TaskIndex();
  const t = (state: TaskState, at: number): Task => ({ ...task(1, state), status: { state, timestamp: new Date(at).toISOString() } });
  index.upsertTask('k', 's', t('TASK_STATE_CANCELED', 1_000), 3, 3);
  index.upsertTask('k', 's', t('TASK_STATE_WORKING', 1_010), 3, 4);
  index.upsertTask('k', 's', t('TASK_STATE_CANCELED', 1_000), 3, 3);
  const working = () => index.page('s', { status: 'TASK_STATE_WORKING', pageSize: 10 });
  expect(working()).toEqual({ keys: ['k'], total: 1 });
  // Without revisions (a bridge's reply) the entry version still orders views.
  index.upsertTask('k', 's', t('TASK_STATE_SUBMITTED', 900), 2);
  expect(working()).toEqual({ keys: ['k'], total: 1 });
});

it('lets go of the finished tasks the ledger let go (status older than its retention), never an open one', () => {
  const index = new TaskIndex();
  for (let i = 0; i < 10; i++) index.upsertTask(`k${i}`, 's', task(i, i < 3 ? 'TASK_STATE_WORKING' : 'TASK_STATE_COMPLETED'));
  for (let i = 10; i < 20; i++) index.upsertTask(`k${i}`, 's', task(i));
  index.upsertTask('only', 'gone', task(1));
  // Tasks 0–9 changed status before the cut; 3–9 of them finished.
  expect(index.prune(1_700_000_000_000 + 10)).toBe(8);
  expect(index.count('s')).toBe(13);
  expect(index.has('k0', 's')).toBe(true);
  expect(index.has('k5', 's')).toBe(false);
  expect(index.page('s', { pageSize: 100 }).keys).toEqual([...Array.from({ length: 10 }, (_, i) => `k${19 - i}`), 'k2', 'k1', 'k0']);
  expect(index.sessionNames()).toEqual(['s']);
});

it("keeps a finished task from its last write when that is later than its status (an ack), as the ledger's age limit counts", () => {
  const index = new TaskIndex();
  const at = 1_700_000_000_000;
  // Finished at `at`, stored then; acked a day later: the same status, written again.
  index.upsertTask('acked', 's', task(0), 2, 2, at);
  index.upsertTask('acked', 's', task(0), 3, 5, at + 86_400_000);
  index.upsertTask('left', 's', task(1), 2, 3, at + 1);
  // Brought over long after it finished: stored a day later than its status says.
  index.upsertTask('late', 's', task(2), 2, 4, at + 86_400_000);
  expect(index.prune(at + 1000)).toBe(1);
  expect(index.page('s', { pageSize: 10 }).keys.sort()).toEqual(['acked', 'late']);
  expect(index.prune(at + 86_400_000 + 1000 + 2)).toBe(2); // kept to the second after its write
  expect(index.count('s')).toBe(0);
});
