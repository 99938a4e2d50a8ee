import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const INDEX = JSON.stringify(fileURLToPath(new URL('./task-index.ts', import.meta.url)));

/** Runs `script` (an ES module, the index imported as `TaskIndex`) in a node of its own with `flags`; its last line, parsed. */
function inNode(flags: string[], script: string): unknown {
  const out = execFileSync(
    process.execPath,
    [
      ...flags,
      '--conditions=development',
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { TaskIndex } from ${INDEX};\n${script}`,
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

it('holds every task in one hidden class (a spread copy had one each on Node 20: three times the memory)', () => {
  // V8's own answer, from a process started with --allow-natives-syntax (a test worker cannot be).
  const script = `
const index = new TaskIndex();
for (let i = 0; i < 2000; i++) {
  const at = new Date(1_700_000_000_000 + i).toISOString();
  index.upsertTask('k' + i, 's', { id: 's:' + i, contextId: 'c' + i, status: { state: 'TASK_STATE_WORKING', timestamp: at } }, 1, i + 1);
  index.upsertTask('k' + i, 's', { id: 's:' + i, contextId: 'c' + i, status: { state: 'TASK_STATE_COMPLETED', timestamp: at + 'x' } }, 2, i + 2);
}
const slots = [...index.sessions.get('s').byKey.values()];
let apart = 0;
for (let i = 1; i < slots.length; i++) if (!%HaveSameMap(slots[0], slots[i])) apart++;
console.log(JSON.stringify({ slots: slots.length, apart }));
`;
  expect(inNode(['--allow-natives-syntax'], script)).toEqual({ slots: 2000, apart: 0 });
});

it("holds a task in under 300 bytes of heap as the ledger's watch brings it (430 when it kept the subject and a copy of the state)", () => {
  // As a watch brings each task: its key cut from a subject decoded from the wire, its task parsed
  // from JSON (a string of its own for the state of each), UUIDs for its id and context as sends make
  // them. Heap measured after full collections, in a node of its own (--expose-gc).
  const script = `
import { randomUUID } from 'node:crypto';
const wire = new TextDecoder();
const index = new TaskIndex();
const N = 20_000;
globalThis.gc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < N; i++) {
  const subject = wire.decode(Buffer.from('$KV.shrooms_tasks.laptop.demo.' + randomUUID()));
  const stored = JSON.stringify({ id: 'demo:' + i, contextId: randomUUID(), status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date(1.7e12 + i).toISOString() } });
  index.upsertTask(subject.slice('$KV.shrooms_tasks.'.length), 'demo', JSON.parse(stored), 3, i + 1);
}
globalThis.gc();
console.log(JSON.stringify({ tasks: index.count('demo'), bytesPerTask: (process.memoryUsage().heapUsed - before) / N }));
`;
  const r = inNode(['--expose-gc'], script) as { tasks: number; bytesPerTask: number };
  expect(r.tasks).toBe(20_000);
  expect(r.bytesPerTask).toBeLessThan(300);
});
