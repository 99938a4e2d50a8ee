import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@shrooms/testing';
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

/** The processes below `pid`, from /proc (Linux). */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      // Fields after the command's closing parenthesis: state, ppid, …
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  for (let todo = [pid]; todo.length;) {
    const p = todo.pop()!;
    for (const [child, pp] of parent) {
      if (pp !== p) continue;
      out.push(child);
      todo.push(child);
    }
  }
  return out;
}

/** Whether `pid` runs (not gone, not a zombie waiting for its parent). */
function runs(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

it.skipIf(!existsSync('/proc/self/stat'))(
  'sent SIGTERM alone, it stops the processes it started and removes their folders (Linux: read from /proc)',
  async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'shrooms-bench-signal-'));
    try {
      const child = spawn(process.execPath, [join(REPO_ROOT, 'bench/dist/main.js'), '--quick', '--node', 'none', '--out', out], {
        cwd: REPO_ROOT,
        env: { ...process.env, TMPDIR: tmp },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          if (/started: ours/.test(err)) resolve();
        });
        void exited.then(() => reject(new Error(`the bench ended before it started:\n${err}`)));
      });
      // nats-server, the gateway, the bridges, the reference, the floor's hops, the load generator.
      const started = descendants(child.pid!);
      expect(started.length, err).toBeGreaterThanOrEqual(6);
      expect((await readdir(tmp)).length).toBeGreaterThan(0);
      child.kill('SIGTERM');
      expect(await exited, err).toBe(143);
      expect(err).toMatch(/SIGTERM: stopping what the bench started/);
      // Its IPC helpers leave once their channel closes: a moment after it ended.
      expect(await eventually(() => started.every((pid) => !runs(pid)), 10_000).catch(() => started.filter(runs))).toBe(true);
      expect(await readdir(tmp)).toEqual([]);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  },
  120_000,
);
