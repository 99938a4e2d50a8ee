import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { SignalView } from '@shrooms/ledger';
import { afterEach, describe, expect, it } from 'vitest';
import { assertOnlyBridge, type Instance } from './single.js';

const self: Instance = { host: 'box', pid: process.pid };
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

function signal(at: string, instance?: Instance): SignalView {
  return {
    machine: 'box',
    session: 'demo',
    harness: 'echo',
    state: 'idle',
    cwd: '/work/demo',
    openTasks: 0,
    queuedTasks: 0,
    autoApprove: false,
    remindersStopped: false,
    at,
    ttlMs: 30_000,
    strength: 1,
    ageMs: 0,
    ...(instance ? { instance } : {}),
  };
}

/** The signal field as a bridge reads it, answering `answers` in turn (the last one from then on). */
function field(...answers: (SignalView | null)[]) {
  let reads = 0;
  return {
    get reads() {
      return reads;
    },
    get: async () => answers[Math.min(reads++, answers.length - 1)]!,
  };
}

const options = { machine: 'box', session: 'demo', self, waitMs: 400, pollMs: 20 };

async function exited(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

async function running(args: string[]): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', ...args], { stdio: 'ignore' });
  children.push(child);
  await new Promise((r) => child.once('spawn', r));
  return child.pid!;
}

describe('assertOnlyBridge', () => {
  it('starts when the session has no signal, or one its own host left behind', async () => {
    await assertOnlyBridge(field(null), options);
    const dead = field(signal('t1', { host: 'box', pid: await exited() }));
    await assertOnlyBridge(dead, options);
    expect(dead.reads).toBe(1);
    // A container started again: its bridge has the pid the last one had.
    await assertOnlyBridge(field(signal('t1', self)), options);
  });

  it.runIf(existsSync('/proc/self/cmdline'))('refuses at once beside a live bridge of its host, naming it', async () => {
    const pid = await running(['bridge', '--session', 'demo']);
    const live = field(signal('t1', { host: 'box', pid }));
    await expect(assertOnlyBridge(live, options)).rejects.toThrow(
      `box/demo already has a bridge (pid ${pid} on box, in /work/demo): two would both take its tasks. Stop that one first`,
    );
    expect(live.reads).toBe(1);
  });

  it('refuses when another host renews the signal while it watches', async () => {
    const elsewhere = { host: 'laptop', pid: 4242 };
    await expect(
      assertOnlyBridge(field(signal('t1', elsewhere), signal('t1', elsewhere), signal('t2', elsewhere)), options),
    ).rejects.toThrow('box/demo already has a bridge (pid 4242 on laptop, in /work/demo)');
    // An older bridge names no process: renewed all the same.
    await expect(assertOnlyBridge(field(signal('t1'), signal('t2')), options)).rejects.toThrow(
      'box/demo already has a bridge (in /work/demo)',
    );
  });

  it('starts when the signal is not renewed within the wait, or goes (withdrawn, faded)', async () => {
    const stale = field(signal('t1', { host: 'laptop', pid: 4242 }));
    await assertOnlyBridge(stale, options);
    expect(stale.reads).toBeGreaterThan(2);
    // A live pid of this host that is not a bridge (reused) is watched like another host's.
    await assertOnlyBridge(field(signal('t1', { host: 'box', pid: await running(['something-else']) })), options);
    await assertOnlyBridge(field(signal('t1', { host: 'laptop', pid: 4242 }), null), options);
  });
});
