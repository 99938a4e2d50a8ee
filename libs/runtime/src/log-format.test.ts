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
      code: 1,
      msg: 'gateway exited unexpectedly',
    });
    expect(formatLogLine(line)).toBe('12:31:56.677 WARN  [up] gateway exited unexpectedly (code=1)');
    expect(formatLogLine('plain words')).toBe('plain words');
    expect(formatLogLine('{not json')).toBe('{not json');
  });

  it('leaves out a field whose value the message says as a word of its own, not one inside a longer word', () => {
    const back = { time: at, level: 'info', service: 'up', part: 'gateway', event: 'restarted', pid: 41, restarts: 1 };
    expect(formatLogLine(JSON.stringify({ ...back, msg: 'gateway is back (pid 41, restart 1)' }))).toBe(
      '12:31:56.677 INFO  [up] gateway is back (pid 41, restart 1) (event=restarted)',
    );
    const inside = { time: at, level: 30, service: 'bridge web', session: 'vm/web', taskId: 'm-1', port: 41 };
    expect(formatLogLine(JSON.stringify({ ...inside, msg: 'took web:m-1 for vm/web. Port 4100' }))).toBe(
      '12:31:56.677 INFO  [bridge web] took web:m-1 for vm/web. Port 4100 (taskId=m-1, port=41)',
    );
  });
});
