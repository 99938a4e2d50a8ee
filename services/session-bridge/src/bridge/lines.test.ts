import { describe, expect, it } from 'vitest';
import { LAST_LINE_CHARS, WorkerLines } from './lines.js';

describe('WorkerLines', () => {
  it("keeps what was said in a turn for that turn's task only", () => {
    const l = new WorkerLines();
    l.begin('a');
    l.said('secret of a');
    l.end();
    l.begin('b');
    expect(l.of('b')).toBe('');
    l.said('about b');
    expect(l.of('a')).toBe('secret of a');
    expect(l.of('b')).toBe('about b');
  });

  it('counts nothing said between turns or in a turn for no task', () => {
    const l = new WorkerLines();
    l.said('before');
    l.begin(undefined);
    l.said('no task');
    expect(l.of('a')).toBe('');
  });

  it('keeps the last 500 characters of a line, and at most max tasks', () => {
    const l = new WorkerLines(2);
    l.begin('a');
    l.said('x'.repeat(LAST_LINE_CHARS + 10));
    expect(l.of('a')).toHaveLength(LAST_LINE_CHARS);
    l.begin('b');
    l.said('b');
    l.begin('c');
    l.said('c');
    expect([l.of('a'), l.of('b'), l.of('c')]).toEqual(['', 'b', 'c']);
    l.forget('b');
    expect(l.of('b')).toBe('');
  });
});
