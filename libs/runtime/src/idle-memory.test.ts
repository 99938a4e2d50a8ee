import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
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
 * A process that grew its heap and then goes quiet, as a service does after start-up. Every 8 s V8's
 * memory reducer reads the allocation rate ("Memory reducer: low alloc" / "high alloc" in
 * --trace-memory-reducer) and after a low reading runs a memory-reducing collection. On Node 24 a
 * process that never allocates on the C++ heap reads "high alloc" at every tick, for good; with
 * releaseMemoryWhenIdle it reads low once the start-up's burst has passed. The test waits for that
 * reading, not for a time: how many ticks a burst takes to read low depends on the machine's load.
 *
 * Only where the nudge acts (V8 13.1 on): before, releaseMemoryWhenIdle does nothing, and how soon
 * V8 alone reads low (8 s quiet, over 60 s on a busy two-core machine) is V8's, not ours. The
 * child loads the module by Node's own type stripping (on by default from Node 22.18), not tsx,
 * whose loader thread would add a second isolate's lines.
 */
const child = (nudge: boolean) => `
import { releaseMemoryWhenIdle } from ${JSON.stringify(fileURLToPath(new URL('./idle-memory.ts', import.meta.url)))};
${nudge ? 'releaseMemoryWhenIdle();' : ''}
let keep = [];
for (let i = 0; i < 50_000; i++) keep.push({ i, s: 'x'.repeat(i % 64) });
keep = null;
console.log('quiet');
setTimeout(() => {}, 120_000);
`;

const READING = /Memory reducer: (low|high) alloc/;
const REDUCING = 'Mark-Compact (reduce)';

/**
 * The reducer's readings and reducing collections once the child is quiet, until `enough` says so;
 * a child that stays quiet 120 s without enough fails the test with what it read.
 */
function traceUntil(nudge: boolean, enough: (lines: string[]) => boolean): Promise<string[]> {
  const proc = spawn(process.execPath, ['--trace-gc', '--trace-memory-reducer', '--input-type=module', '-e', child(nudge)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise<string[]>((resolve, reject) => {
    const seen: string[] = [];
    let quiet = false;
    createInterface({ input: proc.stdout }).on('line', (line) => {
      if (line === 'quiet') quiet = true;
      else if (quiet && (READING.test(line) || line.includes(REDUCING))) seen.push(line);
      if (enough(seen)) resolve(seen);
    });
    proc.once('exit', (code) => reject(new Error(`child exited (${code}) with ${JSON.stringify(seen)}`)));
  }).finally(() => proc.kill());
}

const readings = (lines: string[]) => lines.flatMap((l) => READING.exec(l)?.[1] ?? []);

describe.runIf(needsMemoryReducerNudge())('releaseMemoryWhenIdle', () => {
  it(
    'lets a quiet process read a low allocation rate and collect, where without it every reading is high',
    {
      timeout: 150_000,
    },
    async () => {
      const [nudged, alone] = await Promise.all([
        traceUntil(true, (lines) => lines.some((l) => l.includes(REDUCING))),
        traceUntil(false, (lines) => readings(lines).length >= 2),
      ]);
      expect(readings(nudged)).toContain('low');
      expect(readings(alone)).toEqual(['high', 'high']);
    },
  );
});
