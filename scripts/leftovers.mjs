// What a test run leaves behind once a project of it has ended: the processes its tests started and
// did not stop, and its temporary folders. The test command (test.mjs) gives each run a marker in
// SHROOMS_TEST_RUN; every process the tests start inherits it, and libs/testing's tempDir puts it in
// each folder's name (`<prefix>-<run>-XXXXXX`, libs/testing/src/temp.ts). Processes are found by the
// marker in /proc/<pid>/environ: on a system without /proc none are found.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The environment variable that holds a run's marker (libs/testing's TEST_RUN_ENV). */
export const TEST_RUN_ENV = 'SHROOMS_TEST_RUN';

/** The processes alive now that carry `run`'s marker (this process never): `{ pid, command }`. */
export function processesOfRun(run) {
  const mark = `${TEST_RUN_ENV}=${run}`;
  let names;
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const found = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      // Read as latin1: an environment need not be UTF-8; the marker is ASCII either way.
      if (!readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(mark)) continue;
      const command = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ').trim();
      found.push({ pid: Number(name), command: command.length > 160 ? `${command.slice(0, 159)}…` : command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {
    // Gone already.
  }
}

/** Waits up to `ms` for `run` to have no process left; whether it has none. */
async function gone(run, ms) {
  const until = Date.now() + ms;
  while (processesOfRun(run).length) {
    if (Date.now() >= until) return false;
    await sleep(50);
  }
  return true;
}

/**
 * Waits up to `graceMs` for `run`'s processes to end on their own, then stops what is left (SIGTERM,
 * SIGKILL 2 s later) and returns those it had to stop.
 */
export async function stopProcessesOfRun(run, { graceMs = 0 } = {}) {
  if (await gone(run, graceMs)) return [];
  const left = processesOfRun(run);
  for (const p of left) signal(p.pid, 'SIGTERM');
  await gone(run, 2000);
  for (const p of processesOfRun(run)) signal(p.pid, 'SIGKILL');
  await gone(run, 2000);
  return left;
}

/** Removes `run`'s temporary folders from the OS temp dir; returns their names. */
export function removeFoldersOfRun(run, dir = tmpdir()) {
  const mark = `-${run}-`;
  const names = readdirSync(dir).filter((name) => name.includes(mark));
  for (const name of names) rmSync(join(dir, name), { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  return names;
}
