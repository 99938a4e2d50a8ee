import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { ANSWER_BATCH, ANSWER_DELAY_MS, Answers } from './answers.js';

/**
 * The batching alone, on a fake clock; libs/ledger watch.test.ts shows a real watch's answers reaching
 * nats-server, service.test.ts a quiet endpoint's.
 */
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it('sends the answers gathered within the delay together, in order, once', () => {
  const sent: number[] = [];
  const answers = new Answers();
  answers.add(() => sent.push(1));
  vi.advanceTimersByTime(ANSWER_DELAY_MS / 2);
  answers.add(() => sent.push(2));
  answers.add(() => sent.push(3));
  vi.advanceTimersByTime(ANSWER_DELAY_MS / 2 - 1);
  expect(sent).toEqual([]);
  vi.advanceTimersByTime(1);
  expect(sent).toEqual([1, 2, 3]);
  vi.advanceTimersByTime(ANSWER_DELAY_MS * 10);
  expect(sent).toEqual([1, 2, 3]);
  // A later one waits for its own delay.
  answers.add(() => sent.push(4));
  expect(sent).toEqual([1, 2, 3]);
  vi.advanceTimersByTime(ANSWER_DELAY_MS);
  expect(sent).toEqual([1, 2, 3, 4]);
});

it('sends a full batch at once, without waiting', () => {
  let sent = 0;
  const answers = new Answers();
  for (let i = 0; i < ANSWER_BATCH - 1; i++) answers.add(() => sent++);
  expect(sent).toBe(0);
  answers.add(() => sent++);
  expect(sent).toBe(ANSWER_BATCH);
  expect(vi.getTimerCount()).toBe(0);
});

it('sends what waits when flushed (a watch that stops), and goes on past an answer that throws', () => {
  const sent: string[] = [];
  const answers = new Answers();
  answers.add(() => sent.push('a'));
  answers.add(() => {
    throw new Error('connection closed');
  });
  answers.add(() => sent.push('c'));
  answers.flush();
  expect(sent).toEqual(['a', 'c']);
  expect(vi.getTimerCount()).toBe(0);
});
