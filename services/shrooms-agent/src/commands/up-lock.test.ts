import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir, type TempDir } from '@shrooms/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UP_LOCK_FILE, holdStateDir } from './up-lock.js';

let dir: TempDir;
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await tempDir('up-lock');
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await dir.remove();
});

/** A live process whose arguments are `args` (inherits the run's marker with the environment). */
async function running(args: string[]): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', ...args], { stdio: 'ignore' });
  children.push(child);
  await new Promise((r) => child.once('spawn', r));
  return child.pid!;
}

/** The pid of a process that has exited. */
async function gone(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

const lockOf = () => readFile(join(dir.path, UP_LOCK_FILE), 'utf8');

describe('holdStateDir', () => {
  it('takes a free folder for this process and gives it back, leaving nothing else behind', async () => {
    const release = holdStateDir(dir.path);
    expect(await lockOf()).toBe(`${process.pid}\n`);
    expect(await readdir(dir.path)).toEqual([UP_LOCK_FILE]);
    release();
    expect(await readdir(dir.path)).toEqual([]);
  });

  it('refuses a folder another live `up` holds, naming it and what to do', async () => {
    const other = await running(['up', '--port', '1']);
    await writeFile(join(dir.path, UP_LOCK_FILE), `${other}\n`);
    expect(() => holdStateDir(dir.path)).toThrow(
      `another \`up\` (pid ${other}) runs with the state folder ${dir.path}: stop it first, or give this one a folder of its own`,
    );
    expect(await lockOf()).toBe(`${other}\n`);
    expect(await readdir(dir.path)).toEqual([UP_LOCK_FILE]);
  });

  it('takes over from an `up` that is gone, or a file that names no process', async () => {
    for (const stale of [`${await gone()}\n`, '', 'not a pid']) {
      await writeFile(join(dir.path, UP_LOCK_FILE), stale);
      const release = holdStateDir(dir.path);
      expect(await lockOf()).toBe(`${process.pid}\n`);
      release();
    }
  });

  it.runIf(existsSync('/proc/self/cmdline'))('takes over from a pid that now belongs to a process that is not an `up`', async () => {
    const other = await running(['something-else']);
    await writeFile(join(dir.path, UP_LOCK_FILE), `${other}\n`);
    holdStateDir(dir.path)();
  });

  it('does not remove a lock that is no longer its own', async () => {
    const release = holdStateDir(dir.path);
    const other = await running(['up']);
    await writeFile(join(dir.path, UP_LOCK_FILE), `${other}\n`);
    release();
    expect(await lockOf()).toBe(`${other}\n`);
  });
});
