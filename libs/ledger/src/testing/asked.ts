/** For the ledger's tests: a new task's first entry, as the intake makes it (text `text`, context `c`). */
import { newTask } from '../transitions.js';
import type { LedgerEntry } from '../entry.js';

export const asked = (id: string, text = 'hi'): LedgerEntry =>
  newTask({
    id: `s:${id}`,
    contextId: 'c',
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text }] },
    metadata: {},
    queued: false,
    now: new Date(),
  });
