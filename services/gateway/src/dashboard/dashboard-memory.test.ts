import { fileURLToPath } from 'node:url';
import { heapKeptPerItem } from '@shrooms/testing';
import { expect, it } from 'vitest';

const source = (file: string) => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));

it("keeps a task's row in under 760 bytes of heap as the ledger's watch brings it (950 with a search text of its own, 1,244 with its subject, a copy of its state and of each name)", () => {
  // The board keeps a row for every task the ledger retains while a dashboard page is open. Each
  // task as the watch brings it: its key cut from a subject decoded from the wire, its entry parsed
  // from JSON, a question and an answer of a line each, asked by an agent of another session.
  const kept = heapKeptPerItem({
    imports: `import { randomUUID } from 'node:crypto';
import { Board } from ${source('./board.ts')};
import { toRow } from ${source('./rows.ts')};`,
    setup: `const wire = new TextDecoder();\nconst board = new Board();`,
    add: `  const id = randomUUID();
  const subject = wire.decode(Buffer.from('$KV.shrooms_tasks.laptop.demo.' + id));
  const at = new Date(1.7e12 + i).toISOString();
  const text = (t) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: t }] });
  const task = {
    id: 'demo:' + id,
    contextId: randomUUID(),
    status: { state: 'TASK_STATE_COMPLETED', timestamp: at, message: text('done: the answer to task ' + i + ' is here, with a sentence or two of what was found.') },
    history: [text('please look into issue ' + i + ' and tell me what you find in the logs of the last run')],
    metadata: { 'shrooms/device': 'laptop', 'shrooms/from': 'laptop/other', 'shrooms/depth': 1, 'shrooms/createdAt': at, 'shrooms/session': 'demo', 'shrooms/machine': 'laptop' },
  };
  const entry = JSON.parse(JSON.stringify({ v: 3, task, events: [] }));
  board.upsert(toRow({ key: subject.slice('$KV.shrooms_tasks.'.length), revision: i + 1, entry }));`,
    count: 'board.size',
    n: 20_000,
  });
  expect(kept.count).toBe(20_000);
  expect(kept.bytesPerItem).toBeLessThan(760);
});
