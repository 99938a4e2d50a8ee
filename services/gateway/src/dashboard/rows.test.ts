import { transitions, type Stored } from '@shrooms/ledger';
import { keys } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { toRow } from './rows.js';

const now = new Date('2026-12-01T10:00:00Z');
const working = transitions.start(
  transitions.newTask({
    id: 's:m1',
    contextId: 'c',
    message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'do it' }] },
    metadata: {},
    queued: false,
    now,
  }),
  now,
);
const stored = (entry: Stored['entry']): Stored => ({ key: keys.task('home', 's', 'm1'), revision: 1, entry });

describe('dashboard rows', () => {
  it('shows what the bridge says of a working task where the result goes, and nothing when it says nothing', () => {
    const noted = transitions.note(working, 'the model endpoint answers 500; retrying (attempt 1 of 10)', now)!;
    expect(toRow(stored(noted))?.result).toBe('the model endpoint answers 500; retrying (attempt 1 of 10)');
    expect(toRow(stored(working))?.result).toBeUndefined();
  });
});
