import { transitions, type Stored } from '@shrooms/ledger';
import { keys } from '@shrooms/protocol';
import { expect, it } from 'vitest';
import { Board } from './board.js';
import { toRow } from './rows.js';
import { askedTask } from '../testing/tasks.js';

const DAY = 86_400_000;
const finished = new Date('2026-12-01T10:00:00Z');

/** Task `id` of session s, finished at `finished`, as the ledger stored it at `storedAt`. */
function row(id: string, storedAt: number) {
  const task = askedTask('s', id, { now: finished });
  const entry = transitions.complete(transitions.start(task, finished), 'done', finished);
  const s: Stored = { key: keys.task('home', 's', id), revision: 1, entry, storedAt };
  return toRow(s)!;
}

it('lets a finished task go when the ledger does: from its last write, not its status time', () => {
  const board = new Board();
  board.upsert(row('stored-then', finished.getTime()));
  // Acked a day after it finished (a write that changes no status): the ledger keeps it a day longer.
  board.upsert(row('acked-later', finished.getTime() + DAY));
  expect(board.prune(finished.getTime() + 1000)).toBe(1);
  expect(board.get(keys.task('home', 's', 'acked-later'))).toBeDefined();
  expect(board.prune(finished.getTime() + DAY + 1)).toBe(1);
  expect(board.get(keys.task('home', 's', 'acked-later'))).toBeUndefined();
});
