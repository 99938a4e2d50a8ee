/**
 * What a long-kept structure costs, measured in a Node of its own: one started with flags a test
 * worker cannot have (`--expose-gc`, `--allow-natives-syntax`), the workspace's TypeScript sources
 * importable as the tests run them.
 */
import { execFileSync } from 'node:child_process';

/** Runs `script` (an ES module) in a child Node with `flags`; returns the JSON its last line prints. */
export function inTsNode<T>(flags: string[], script: string): T {
  const out = execFileSync(
    process.execPath,
    [...flags, '--conditions=development', '--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return JSON.parse(out.trim().split('\n').at(-1)!) as T;
}

/**
 * Heap bytes kept per item: `add` (statements; `i` is the item's number) runs `n` times after
 * `setup`, between two full collections; `imports` open the module. `count` (an expression, run last)
 * says how many items the structure holds, so that a build that kept nothing cannot pass.
 */
export function heapKeptPerItem(o: { imports: string; setup: string; add: string; count: string; n: number }): {
  bytesPerItem: number;
  count: number;
} {
  return inTsNode(
    ['--expose-gc'],
    `${o.imports}
${o.setup}
globalThis.gc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < ${o.n}; i++) {
${o.add}
}
globalThis.gc();
console.log(JSON.stringify({ bytesPerItem: (process.memoryUsage().heapUsed - before) / ${o.n}, count: ${o.count} }));
`,
  );
}
