import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
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
  // The memory job (quick: 1,000 and 10,000 retained tasks).
  ...['gateway', 'bridge', 'guard', 'scheduler'].flatMap((p) => [`idle_rss_${p}_mb`, `idle_private_${p}_mb`].map((f) => [f, ['ours']])),
  ...[1_000, 10_000].flatMap((n) => [`gateway_rss_${n}_tasks_mb`, `gateway_start_${n}_tasks_ms`].map((f) => [f, ['ours']])),
  ['gateway_rss_listed_idle_10000_tasks_mb', ['ours']],
  ['up_ready_ms', ['ours']],
  ['up_first_answer_ms', ['ours']],
]);

// As `pnpm bench --quick` runs it: built first, then the compiled bench.
beforeAll(() => {
  expect(spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/build.mjs')], { cwd: REPO_ROOT, stdio: 'inherit' }).status).toBe(0);
});

it('--memory and --render on a folder no run has written to say so and measure nothing', () => {
  for (const flag of ['--memory', '--render']) {
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bench/dist/main.js'), flag, '--node', 'none', '--out', out], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${flag} builds on the last run's ${join(out, 'latest.json')}, and there is none`);
  }
});

it('writes latest.json and REPORT.md with every figure, each with its ratios', async () => {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bench/dist/main.js'), '--quick', '--out', out], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-5000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, err).toBe(0);

  const result = JSON.parse(await readFile(join(out, 'latest.json'), 'utf8'));
  expect(result.schema).toBe('shrooms-bench/1');
  expect(result.machine.cores).toBeGreaterThan(0);
  expect(result.machine.natsServer).not.toBe('unknown');
  // Ours admitted its tasks as `up` runs it: in the gateway, one window write per new task.
  expect(result.run.admission.how).toBe('local');
  expect(result.run.admission.admits).toBeGreaterThan(0);
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

  // Every aim of the issue, judged: a ratio or a value, its target, met or not (and REPORT.md says which).
  expect(result.aims.length).toBeGreaterThanOrEqual(14);
  for (const a of result.aims) {
    expect(a).toMatchObject({ aim: expect.any(String), target: expect.any(Number), met: expect.any(Boolean) });
    expect('ratio' in a || 'value' in a, a.aim).toBe(true);
  }

  const report = await readFile(join(out, 'REPORT.md'), 'utf8');
  for (const a of result.aims)
    expect(report, a.aim).toMatch(new RegExp(`\\| ${a.aim.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\|.*\\| (\\*\\*met\\*\\*|not met) \\|`));
  for (const heading of ['Where we stand against the aims', 'The machine and the run', 'What limits each figure', 'How to reproduce'])
    expect(report).toContain(heading);
});
