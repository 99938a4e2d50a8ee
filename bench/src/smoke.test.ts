import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { REPO_ROOT } from './child.js';

const out = await mkdtemp(join(tmpdir(), 'shrooms-bench-'));
afterAll(() => rm(out, { recursive: true, force: true }));

const ALL_ARMS = ['floor', 'reference', 'ours'];
/** Every figure the issue asks for, with the arms that must have a value. */
const EXPECTED: Record<string, string[]> = Object.fromEntries([
  ...['p50', 'p90', 'p99'].flatMap((q) =>
    ['send_blocking_c1', 'sse_first_event', 'get_task_small', 'get_task_large', 'list_tasks_small', 'list_tasks_large'].map((f) => [
      `${f}_${q}_ms`,
      ALL_ARMS,
    ]),
  ),
  ...[16, 64].flatMap((c) => [`tasks_per_s_c${c}_blocking`, `tasks_per_s_c${c}_nonblocking`].map((f) => [f, ALL_ARMS])),
  ['peak_rss_mb', ALL_ARMS],
  ['peak_rss_gateway_mb', ['ours']],
  ['peak_rss_bridge_mb', ['ours']],
]);

it('writes latest.json and REPORT.md with every figure, each with its ratios', async () => {
  const child = spawn(
    process.execPath,
    ['--conditions=development', '--import', 'tsx', join(REPO_ROOT, 'bench/src/main.ts'), '--quick', '--out', out],
    { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-5000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, err).toBe(0);

  const result = JSON.parse(await readFile(join(out, 'latest.json'), 'utf8'));
  expect(result.schema).toBe('shrooms-bench/1');
  expect(result.machine.cores).toBeGreaterThan(0);
  expect(result.machine.natsServer).not.toBe('unknown');
  for (const [key, arms] of Object.entries(EXPECTED)) {
    const f = result.figures[key];
    expect(f, key).toBeDefined();
    for (const arm of arms) {
      expect(f.arms[arm]?.value, `${key} ${arm}`).toEqual(expect.any(Number));
      expect(f.arms[arm]?.errors ?? 0, `${key} ${arm} errors`).toBe(0);
    }
    if (arms.length === 3) {
      expect(f.ratios.ours_reference, `${key} ours/reference`).toEqual(expect.any(Number));
      expect(f.ratios.ours_floor, `${key} ours/floor`).toEqual(expect.any(Number));
    }
  }

  const report = await readFile(join(out, 'REPORT.md'), 'utf8');
  for (const heading of ['Where we stand against the aims', 'The machine and the run', 'What limits each figure', 'How to reproduce'])
    expect(report).toContain(heading);
});
