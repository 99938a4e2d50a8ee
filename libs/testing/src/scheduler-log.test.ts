import { describe, expect, it } from 'vitest';
import { sendsInFlight } from './scheduler-log.js';

const line = (schedule: string, msg: string) => JSON.stringify({ level: 30, replica: 'r1', schedule, msg });

describe('sendsInFlight', () => {
  it('names a schedule whose last claim has no end after it, and only that one', () => {
    const out = [
      line('a', 'occurrence claimed'),
      line('b', 'occurrence claimed'),
      'not json',
      line('a', 'occurrence fired'),
      line('c', 'occurrence claimed'),
      line('c', 'occurrence not taken yet; will retry'),
      line('a', 'occurrence claimed'),
      line('a', 'schedule step failed; retried next tick'),
      line('b', 'occurrence fired'),
      line('b', 'occurrence claimed'),
    ].join('\n');
    expect(sendsInFlight(out)).toEqual(['b']);
    expect(sendsInFlight(`${out}\n${line('b', 'occurrence fired')}\n`)).toEqual([]);
  });
});
