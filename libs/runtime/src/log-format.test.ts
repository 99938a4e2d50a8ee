import { describe, expect, it } from 'vitest';
import { formatLogLine } from './log-format.js';

const at = Date.parse('2026-12-07T12:31:56.677Z');

describe('a log line as a person reads it', () => {
  it("gives pino's line its time, level, part and message, with the line's own plain fields", () => {
    const line = JSON.stringify({
      level: 30,
      time: at,
      pid: 7,
      hostname: 'vm',
      name: 'bridge web',
      service: 'bridge web',
      taskId: 'web:m-1',
      nudge: 2,
      msg: 'reminding the session',
    });
    expect(formatLogLine(line)).toBe('12:31:56.677 INFO  [bridge web] reminding the session (taskId=web:m-1, nudge=2)');
  });

  it('adds an error message, leaves objects (a config) out and cuts a long value', () => {
    const line = JSON.stringify({
      level: 50,
      time: at,
      service: 'gateway',
      err: { message: 'boom', stack: '…' },
      config: { A: 1 },
      url: 'x'.repeat(200),
      msg: 'failed',
    });
    expect(formatLogLine(line)).toBe(`12:31:56.677 ERROR [gateway] failed: boom (url=${'x'.repeat(120)}…)`);
  });

  it("reads up.log's lines (a level word, an ISO time), and leaves a line that is not JSON as it is", () => {
    const line = JSON.stringify({
      time: '2026-12-07T12:31:56.677Z',
      service: 'up',
      level: 'warn',
      part: 'gateway',
      msg: 'gateway exited unexpectedly',
    });
    expect(formatLogLine(line)).toBe('12:31:56.677 WARN  [up] gateway exited unexpectedly (part=gateway)');
    expect(formatLogLine('plain words')).toBe('plain words');
    expect(formatLogLine('{not json')).toBe('{not json');
  });
});
