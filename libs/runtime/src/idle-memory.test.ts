import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { needsMemoryReducerNudge } from './idle-memory.js';

describe('needsMemoryReducerNudge', () => {
  it('is needed from V8 13.1 on (Node 24), not before (Node 20, 22)', () => {
    expect(
      ['11.3.244.8-node.33', '12.4.254.21-node.33', '13.0.1', '13.1.0', '13.6.233.17-node.37', '14.6.1'].map((v) =>
        needsMemoryReducerNudge(v),
      ),
    ).toEqual([false, false, false, true, true, true]);
  });
});

/**
 * A process that grew its heap and then goes quiet, as a service does after start-up: V8's memory
 * reducer collects it again (a "Mark-Compact (reduce)" in --trace-gc) within a few of its 8 s
 * ticks. On Node 24 without releaseMemoryWhenIdle the reducer reads "high alloc" at every tick and
 * this waits for the 100 s watchdog: the test times out.
 */
const script = `
import { releaseMemoryWhenIdle } from ${JSON.stringify(fileURLToPath(new URL('./idle-memory.ts', import.meta.url)))};
releaseMemoryWhenIdle();
let keep = [];
for (let i = 0; i < 200_000; i++) keep.push({ i, s: 'x'.repeat(i % 64) });
keep = null;
console.log('quiet');
setTimeout(() => {}, 60_000);
`;

/** Resolves with the --trace-gc line of the first memory-reducing collection once the child is quiet. */
function firstReducingCollection(): Promise<string> {
  const child = spawn(
    process.execPath,
    ['--trace-gc', '--conditions=development', '--import', 'tsx', '--input-type=module', '-e', script],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise<string>((resolve, reject) => {
    let quiet = false;
    let buf = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buf += chunk;
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const line of lines) {
        if (line === 'quiet') quiet = true;
        else if (quiet && line.includes('Mark-Compact (reduce)')) resolve(line);
      }
    });
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before a memory-reducing collection`)));
  }).finally(() => child.kill());
}

describe('releaseMemoryWhenIdle', () => {
  it('lets a quiet process run a memory-reducing collection on this Node', { timeout: 60_000 }, async () => {
    expect(await firstReducingCollection()).toMatch(/Mark-Compact \(reduce\)/);
  });
});
