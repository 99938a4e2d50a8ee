import { expect, it } from 'vitest';
import { TaskQueue, type Queued } from './queue.js';

const q = (key: string, askedAt: number, answer = false): Queued => ({ key, taskId: `s:${key}`, answer, askedAt });

it('keeps answers ahead of new tasks, each group in the order asked, equals in the order they came', () => {
  const queue = new TaskQueue();
  for (const item of [q('n3', 30), q('n1', 10), q('a2', 25, true), q('n2', 20), q('a1', 5, true), q('n2b', 20), q('n4', 40)])
    queue.add(item);
  expect(queue.list().map((x) => x.key)).toEqual(['a1', 'a2', 'n1', 'n2', 'n2b', 'n3', 'n4']);
  expect([queue.shift()?.key, queue.shift()?.key, queue.length]).toEqual(['a1', 'a2', 5]);
});

it('holds a key once, and forgets it when it is taken out or removed', () => {
  const queue = new TaskQueue();
  queue.add(q('a', 1));
  queue.add(q('a', 2));
  queue.add(q('b', 3));
  expect([queue.length, queue.has('a')]).toEqual([2, true]);
  expect(queue.remove('a')).toBe(true);
  expect(queue.remove('a')).toBe(false);
  expect([queue.has('a'), queue.shift()?.key, queue.has('b'), queue.shift()]).toEqual([false, 'b', false, undefined]);
  queue.add(q('a', 4));
  expect(queue.list().map((x) => x.key)).toEqual(['a']);
});

it('stays in order over many tasks added in any order', () => {
  const queue = new TaskQueue();
  const times = Array.from({ length: 2000 }, (_, i) => (i * 7919) % 2000);
  for (const t of times) queue.add(q(`k${t}`, t, t % 5 === 0));
  const got = queue.list();
  for (let i = 1; i < got.length; i++) {
    const [a, b] = [got[i - 1]!, got[i]!];
    expect(a.answer > b.answer || (a.answer === b.answer && a.askedAt <= b.askedAt)).toBe(true);
  }
  expect(got).toHaveLength(2000);
});
