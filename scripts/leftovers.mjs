// What a test run leaves behind once a project of it has ended: the processes its tests started and
// did not stop, and its temporary folders. The test command (test.mjs) gives each run a marker in
// SHROOMS_TEST_RUN; every process the tests start inherits it, and libs/testing's tempDir puts it in
// each folder's name (`<prefix>-<run>-XXXXXX`, libs/testing/src/temp.ts). Processes are found by the
// marker in /proc/<pid>/environ: on a system without /proc none are found.
//
// A marker names the test command's process (`t<pid>x<random>`), so that a run killed outright
// (SIGKILL, where it could stop nothing) is cleaned up by the next run on the same host.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The environment variable that holds a run's marker (libs/testing's TEST_RUN_ENV). */
export const TEST_RUN_ENV = 'SHROOMS_TEST_RUN';

const MARKER = /^t(\d+)x[0-9a-f]{8}$/;

/** A new marker for a run this process owns. */
export function newRunMarker() {
  return `t${process.pid}x${randomBytes(4).toString('hex')}`;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** This host's process ids and their environments' markers, in this process's pid namespace only. */
function markedProcesses() {
  let names;
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const ns = readlinkSync('/proc/self/ns/pid');
  const found = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      // Another pid namespace (a container) counts its pids apart: its markers are not ours to read.
      if (readlinkSync(`/proc/${name}/ns/pid`) !== ns) continue;
      // Read as latin1: an environment need not be UTF-8; the marker is ASCII either way.
      const mark = readFileSync(`/proc/${name}/environ`, 'latin1')
        .split('\0')
        .find((v) => v.startsWith(`${TEST_RUN_ENV}=`));
      if (mark) found.push({ pid: Number(name), run: mark.slice(TEST_RUN_ENV.length + 1) });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/**
 * Runs whose test command is gone (killed outright) and that left processes or temporary folders
 * behind: their markers. Only markers made by newRunMarker count (a plain vitest run's do not name an owner).
 */
export function deadRuns(dir = tmpdir()) {
  const runs = new Set([
    ...markedProcesses().map((p) => p.run),
    ...readdirSync(dir).flatMap((name) => /-(t\d+x[0-9a-f]{8})-/.exec(name)?.[1] ?? []),
  ]);
  return [...runs].filter((run) => {
    const owner = MARKER.exec(run)?.[1];
    return owner !== undefined && !alive(Number(owner));
  });
}

/** The processes alive now that carry `run`'s marker (this process never): `{ pid, command }`. */
export function processesOfRun(run) {
  const found = [];
  for (const p of markedProcesses()) {
    if (p.run !== run) continue;
    try {
      const command = readFileSync(`/proc/${p.pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
      found.push({ pid: p.pid, command: command.length > 160 ? `${command.slice(0, 159)}…` : command });
    } catch {
      // Gone meanwhile.
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

/** Stops the processes and removes the temporary folders of runs whose test command was killed: how many of each. */
export async function sweepDeadRuns(dir = tmpdir()) {
  let processes = 0;
  let folders = 0;
  for (const run of deadRuns(dir)) {
    processes += (await stopProcessesOfRun(run)).length;
    folders += removeFoldersOfRun(run, dir).length;
  }
  return { processes, folders };
}
