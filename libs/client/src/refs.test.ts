import { ShroomsError } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { newMessageId, parseAgentName, parseTaskRef } from './refs.js';

describe('task and agent names', () => {
  it('reads a bare SESSION:ID as a task of this machine', () => {
    expect(parseTaskRef('review:cli-1', 'laptop')).toEqual({
      machine: 'laptop',
      session: 'review',
      name: 'laptop/review',
      messageId: 'cli-1',
      id: 'review:cli-1',
      task: 'laptop/review:cli-1',
    });
  });

  it('keeps the machine of MACHINE/SESSION:ID and colons inside the message id', () => {
    const r = parseTaskRef('pi5/jimmy:m:1/x', 'laptop');
    expect(r.machine).toBe('pi5');
    expect(r.id).toBe('jimmy:m:1/x');
  });

  it('refuses a bad task name with INVALID_PARAMS saying what to write', () => {
    const err = (() => {
      try {
        parseTaskRef('no-colon-here', 'laptop');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ShroomsError);
    expect((err as ShroomsError).key).toBe('INVALID_PARAMS');
    expect((err as ShroomsError).message).toMatch(/MACHINE\/SESSION:ID/);
  });

  it('refuses agent names that could not be subjects of the mesh', () => {
    expect(() => parseAgentName('a b')).toThrow(ShroomsError);
    expect(parseAgentName('laptop/web.app')).toEqual({ machine: 'laptop', session: 'web.app' });
  });

  it('makes message ids of the form PREFIX-STAMP-HEX', () => {
    expect(newMessageId('cli', new Date('2026-10-08T09:15:02.123Z'))).toMatch(/^cli-20261008T091502-[0-9a-f]{8}$/);
  });
});
