import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { isRunning, tempDir, type TempDir } from '@shrooms/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  deadRuns,
  newRunMarker,
  processesOfRun,
  removeFoldersOfRun,
  stopProcessesOfRun,
  sweepDeadRuns,
  TEST_RUN_ENV,
} from './leftovers.mjs';

const testCommand = fileURLToPath(new URL('./test.mjs', import.meta.url));
/** A run's processes are found in /proc (Linux); elsewhere none are, and these tests are skipped. */
const withProc = existsSync('/proc/self/environ');

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

let dir: TempDir;
/** Markers of the runs made up here, and pids the command's stand-in started: all stopped after each test. */
const runs: string[] = [];
const started: number[] = [];
function newRun(): string {
  runs.push(`t${randomBytes(4).toString('hex')}`);
  return runs.at(-1)!;
}

beforeEach(async () => {
  dir = await tempDir('shrooms-leftovers');
});

afterEach(async () => {
  for (const run of runs.splice(0)) await stopProcessesOfRun(run);
  for (const pid of started.splice(0)) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  await dir.remove();
});

/** A process of its own session that outlives whoever started it, as a leaked service does. */
function orphan(run: string, [cmd, ...args] = ['sleep', '300']): number {
  const p = spawn(cmd!, args, { detached: true, stdio: 'ignore', env: { ...process.env, [TEST_RUN_ENV]: run } });
  p.unref();
  return p.pid!;
}

describe.skipIf(!withProc)('leftovers of a test run', () => {
  it("finds the processes that carry the run's marker, and no other run's", async () => {
    const [a, b, c] = [newRun(), newRun(), newRun()];
    const mine = orphan(a);
    const other = orphan(b);
    await until(() => processesOfRun(a).length === 1 && processesOfRun(b).length === 1, 'both to start');
    expect(processesOfRun(a)).toEqual([{ pid: mine, command: 'sleep 300' }]);
    expect(processesOfRun(b).map((p) => p.pid)).toEqual([other]);
    expect(processesOfRun(c)).toEqual([]);
  });

  it('waits for them to end on their own, then stops them, a process deaf to SIGTERM too', async () => {
    const [d, e] = [newRun(), newRun()];
    const brief = orphan(d, ['sleep', '0.3']);
    expect(await stopProcessesOfRun(d, { graceMs: 5000 })).toEqual([]);
    expect(isRunning(brief)).toBe(false);

    const deaf = orphan(e, ['sh', '-c', "trap '' TERM; sleep 300"]);
    const polite = orphan(e);
    await until(() => processesOfRun(e).length === 3, 'all three to start');
    const stopped = await stopProcessesOfRun(e, { graceMs: 200 });
    // The deaf shell, its sleep (deaf too: an ignored signal is inherited) and the other sleep.
    expect(stopped).toHaveLength(3);
    expect(stopped.map((p) => p.pid)).toEqual(expect.arrayContaining([deaf, polite]));
    for (const p of stopped) expect(isRunning(p.pid)).toBe(false);
    expect(processesOfRun(e)).toEqual([]);
  });

  it("removes the run's temporary folders and no one else's", () => {
    for (const name of ['shrooms-nats-tmine0001-aaa', 'shrooms-x-tmine0001-bbb', 'shrooms-nats-tother001-ccc'])
      mkdirSync(join(dir.path, name, 'js'), { recursive: true });
    expect(removeFoldersOfRun('tmine0001', dir.path).sort()).toEqual(['shrooms-nats-tmine0001-aaa', 'shrooms-x-tmine0001-bbb']);
    expect(existsSync(join(dir.path, 'shrooms-nats-tother001-ccc'))).toBe(true);
  });
});

/** The marker of a run whose test command is gone: a pid that was a process's and is no more. */
function runOfAGoneCommand(): string {
  const gone = spawnSync(process.execPath, ['-e', '0']).pid;
  const run = `t${gone}x${randomBytes(4).toString('hex')}`;
  runs.push(run);
  return run;
}

describe.skipIf(!withProc)('leftovers of a test run killed outright', () => {
  it('are swept: the processes and folders of runs whose command is gone, not of a live one or a plain marker', async () => {
    const killed = runOfAGoneCommand();
    const live = newRunMarker(); // this process is its owner, and alive
    const plain = newRun(); // as a vitest run started by hand marks it: no owner named
    runs.push(live);
    const [a, b, c] = [orphan(killed), orphan(live), orphan(plain)];
    for (const run of [killed, live, plain]) mkdirSync(join(dir.path, `shrooms-nats-${run}-abc`));
    await until(() => [killed, live, plain].every((run) => processesOfRun(run).length === 1), 'all three to start');
    expect(deadRuns(dir.path)).toContain(killed);
    expect(deadRuns(dir.path)).not.toContain(live);
    expect(await sweepDeadRuns(dir.path)).toEqual({ processes: 1, folders: 1 });
    expect([isRunning(a), isRunning(b), isRunning(c)]).toEqual([false, true, true]);
    expect(existsSync(join(dir.path, `shrooms-nats-${killed}-abc`))).toBe(false);
    expect(existsSync(join(dir.path, `shrooms-nats-${live}-abc`))).toBe(true);
  });
});

/**
 * The test command around a project's run. What runs the project here is a stand-in for vitest (a
 * script at node_modules/vitest/vitest.mjs of the command's working folder): it starts a process of
 * its own that outlives it, as a leaked service would, then ends as the case needs. What is tested
 * is what the command does around it; the real vitest dying of a closed output was seen by hand.
 */
describe.skipIf(!withProc)('the test command', () => {
  const fakeVitest = `import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const p = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
p.unref();
appendFileSync(process.env.FAKE_PIDS, p.pid + '\\n');
const report = process.argv.find((a) => a.startsWith('--outputFile.json=')).slice('--outputFile.json='.length);
const passed = { numPassedTests: 1, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0, numFailedTestSuites: 0, testResults: [] };
// Never outlives a failed test by long (the command under test is what should stop it).
setTimeout(() => process.exit(3), 30_000).unref();
switch (process.env.FAKE_MODE) {
  case 'leave': writeFileSync(report, JSON.stringify(passed)); break;
  case 'talk': {
    // A folder as libs/testing's tempDir names it, which this run's teardown will never remove.
    const folder = mkdtempSync(join(tmpdir(), 'shrooms-fake-' + process.env.SHROOMS_TEST_RUN + '-'));
    writeFileSync(process.env.FAKE_PIDS + '.folder', folder);
    setInterval(() => console.log('a test passed'), 50);
    break;
  }
  case 'wait':
    process.on('SIGINT', () => {
      writeFileSync(process.env.FAKE_PIDS + '.signal', 'SIGINT');
      process.exit(130);
    });
    setInterval(() => {}, 1000);
    break;
}
`;

  function start(mode: string): { cmd: ChildProcess; pids: () => number[]; out: () => string; err: () => string } {
    mkdirSync(join(dir.path, 'node_modules', 'vitest'), { recursive: true });
    writeFileSync(join(dir.path, 'node_modules', 'vitest', 'vitest.mjs'), fakeVitest);
    const pidsFile = join(dir.path, 'pids');
    writeFileSync(pidsFile, '');
    const cmd = spawn(process.execPath, [testCommand, 'unit'], {
      cwd: dir.path,
      env: { ...process.env, FAKE_MODE: mode, FAKE_PIDS: pidsFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    cmd.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    cmd.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    const pids = () => readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number);
    return { cmd, pids, out: () => out, err: () => err };
  }

  it('fails the run when a project leaves a process running, and stops it', async () => {
    const run = start('leave');
    const [code] = await once(run.cmd, 'exit');
    const [pid] = run.pids();
    started.push(pid!);
    expect(code).toBe(1);
    expect(isRunning(pid!)).toBe(false);
    expect(run.err()).toContain(
      'LEFT RUNNING by project unit: 1 process(es) its tests started were still running 5 s after it ended; stopped now:',
    );
    expect(run.err()).toContain(`  ${pid} sleep 60`);
    expect(run.out()).toContain('    failed: 1 process(es) left running: sleep 60');
    expect(run.out().trim().split('\n').at(-1)).toBe('1 passed, 1 failed');
  }, 20_000);

  it('stops the project and all it started when its output is closed (`| head`)', async () => {
    const run = start('talk');
    await until(() => run.out().includes('a test passed'), 'the project to talk');
    run.cmd.stdout!.destroy();
    const [code] = await once(run.cmd, 'exit');
    const [pid] = run.pids();
    started.push(pid!);
    expect(code).not.toBe(0);
    expect(isRunning(pid!)).toBe(false);
    expect(run.err()).toContain(
      'project unit did not end normally: stopped the 1 process(es) its tests had started and removed 1 temporary folder(s)',
    );
    expect(existsSync(readFileSync(join(dir.path, 'pids.folder'), 'utf8'))).toBe(false);
  }, 20_000);

  it('first stops what a run killed outright left running', async () => {
    const killed = runOfAGoneCommand();
    const left = orphan(killed);
    await until(() => processesOfRun(killed).length === 1, 'the process to start');
    const run = start('leave');
    await once(run.cmd, 'exit');
    started.push(...run.pids());
    expect(isRunning(left)).toBe(false);
    expect(run.err()).toMatch(/^stopped [1-9]\d* process\(es\) and removed \d+ temporary folder\(s\) left by test runs that were killed$/m);
  }, 20_000);

  it('stops the project and all it started on SIGTERM, and says so', async () => {
    const run = start('wait');
    await until(() => run.pids().length === 1, 'the project to start its process');
    run.cmd.kill('SIGTERM');
    const [code] = await once(run.cmd, 'exit');
    const [pid] = run.pids();
    started.push(pid!);
    expect(code).toBe(143);
    expect(isRunning(pid!)).toBe(false);
    expect(run.err()).toContain('test run stopped (SIGTERM): 1 of its processes stopped, 0 of its temporary folders removed');
  }, 20_000);

  it('passes a SIGINT sent to it alone on to the project, then stops all it started', async () => {
    const run = start('wait');
    await until(() => run.pids().length === 1, 'the project to start its process');
    run.cmd.kill('SIGINT');
    const [code] = await once(run.cmd, 'exit');
    const [pid] = run.pids();
    started.push(pid!);
    expect(code).toBe(130);
    expect(readFileSync(join(dir.path, 'pids.signal'), 'utf8')).toBe('SIGINT');
    expect(isRunning(pid!)).toBe(false);
    expect(run.err()).toContain('test run stopped (SIGINT): 1 of its processes stopped, 0 of its temporary folders removed');
  }, 20_000);
});
