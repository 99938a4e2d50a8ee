import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { SignalView } from '@shrooms/ledger';
import { afterEach, describe, expect, it } from 'vitest';
import { claimSession, type Instance } from './single.js';

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
    cwd: '/home/me/demo',
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

/**
 * The session's signal as a starting bridge reads it: `answers` in turn (the last one from then on),
 * each a signal (or none) at a revision; claims answer `claims` in turn (then true), and are recorded.
 */
function slot(answers: [SignalView | null, number][], claims: boolean[] = []) {
  let reads = 0;
  const claimed: number[] = [];
  return {
    get reads() {
      return reads;
    },
    claimed,
    read: async () => {
      const [signal, revision] = answers[Math.min(reads++, answers.length - 1)]!;
      return { signal, revision };
    },
    claim: async (revision: number) => {
      claimed.push(revision);
      return claims[claimed.length - 1] ?? true;
    },
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

describe('claimSession', () => {
  it('claims a session with no signal, or one its own host left behind, at the revision it read', async () => {
    const none = slot([[null, 0]]);
    await claimSession(none, options);
    expect(none.claimed).toEqual([0]);
    const dead = slot([[signal('t1', { host: 'box', pid: await exited() }), 7]]);
    await claimSession(dead, options);
    expect([dead.reads, dead.claimed]).toEqual([1, [7]]);
    // A container started again: its bridge has the pid the last one had.
    const again = slot([[signal('t1', self), 9]]);
    await claimSession(again, options);
    expect(again.claimed).toEqual([9]);
  });

  it.runIf(existsSync('/proc/self/cmdline'))(
    'refuses at once beside a live bridge of its host, naming it, and claims nothing',
    async () => {
      const pid = await running(['bridge', '--session', 'demo']);
      const live = slot([[signal('t1', { host: 'box', pid }), 3]]);
      await expect(claimSession(live, options)).rejects.toThrow(
        `box/demo already has a bridge (pid ${pid} on box, in /home/me/demo): two would both take its tasks. Stop that one first, start this one with --standby (BRIDGE_STANDBY=1) to take over when it stops`,
      );
      expect([live.reads, live.claimed]).toEqual([1, []]);
    },
  );

  it('refuses when another host renews the signal while it watches', async () => {
    const elsewhere = { host: 'laptop', pid: 4242 };
    const renewed = slot([
      [signal('t1', elsewhere), 3],
      [signal('t1', elsewhere), 3],
      [signal('t2', elsewhere), 4],
    ]);
    await expect(claimSession(renewed, options)).rejects.toThrow('box/demo already has a bridge (pid 4242 on laptop, in /home/me/demo)');
    expect(renewed.claimed).toEqual([]);
    // An older bridge names no process: renewed all the same.
    await expect(
      claimSession(
        slot([
          [signal('t1'), 3],
          [signal('t2'), 4],
        ]),
        options,
      ),
    ).rejects.toThrow('box/demo already has a bridge (in /home/me/demo)');
  });

  it('claims when the signal is not renewed within the wait, or goes (withdrawn, faded)', async () => {
    const stale = slot([[signal('t1', { host: 'laptop', pid: 4242 }), 3]]);
    await claimSession(stale, options);
    expect(stale.reads).toBeGreaterThan(2);
    expect(stale.claimed).toEqual([3]);
    // A live pid of this host that is not a bridge (reused) is watched like another host's.
    await claimSession(slot([[signal('t1', { host: 'box', pid: await running(['something-else']) }), 3]]), options);
    // Withdrawn while it watched: decided again on what is there now.
    const withdrawn = slot([
      [signal('t1', { host: 'laptop', pid: 4242 }), 3],
      [null, 4],
    ]);
    await claimSession(withdrawn, options);
    expect(withdrawn.claimed).toEqual([4]);
  });

  it.runIf(existsSync('/proc/self/cmdline'))('decides again when another bridge claimed first, and is refused by its claim', async () => {
    // Both read no signal; the other's claim landed first, so this one's finds the key moved.
    const pid = await running(['bridge', '--session', 'demo']);
    const raced = slot(
      [
        [null, 0],
        [signal('t1', { host: 'box', pid }), 1],
      ],
      [false],
    );
    await expect(claimSession(raced, options)).rejects.toThrow(`box/demo already has a bridge (pid ${pid} on box`);
    expect(raced.claimed).toEqual([0]);
  });

  it('gives up, saying why, when its claims keep finding the key moved', async () => {
    const busy = slot([[null, 0]], [false, false, false, false, false]);
    await expect(claimSession(busy, options)).rejects.toThrow(
      'box/demo: its signal changed under each of 5 claims: another bridge is starting for it.',
    );
    expect(busy.claimed).toHaveLength(5);
  });

  describe('in standby', () => {
    const said = () => {
      const lines: string[] = [];
      return { lines, log: { info: (m: string) => lines.push(m) } as never };
    };

    it.runIf(existsSync('/proc/self/cmdline'))(
      'waits beside a live bridge of its host and claims once its signal is withdrawn',
      async () => {
        const pid = await running(['bridge', '--session', 'demo']);
        const live: [SignalView | null, number] = [signal('t1', { host: 'box', pid }), 3];
        const served = slot([live, live, live, [null, 5]]);
        const { lines, log } = said();
        await claimSession(served, { ...options, standby: true, standbyPollMs: 10, log });
        expect([served.reads, served.claimed]).toEqual([4, [5]]);
        expect(lines).toEqual([
          `box/demo already has a bridge (pid ${pid} on box, in /home/me/demo): standing by, this bridge takes the session when that one stops`,
          'box/demo is free: this bridge takes it over',
        ]);
      },
    );

    it('keeps watching a bridge of another host while it renews, and claims when the renewals stop', async () => {
      const elsewhere = { host: 'laptop', pid: 4242 };
      const renewing = slot([
        [signal('t1', elsewhere), 3],
        [signal('t2', elsewhere), 4],
        [signal('t2', elsewhere), 4],
        [signal('t3', elsewhere), 5],
        [signal('t3', elsewhere), 5],
      ]);
      const { lines, log } = said();
      await claimSession(renewing, { ...options, standby: true, standbyPollMs: 10, log });
      expect(renewing.claimed).toEqual([5]);
      // Said once on the first watch, once on standing by, once on taking over: not on every round.
      expect(lines).toHaveLength(3);
      expect(lines[1]).toMatch(/^box\/demo already has a bridge \(pid 4242 on laptop, in \/home\/me\/demo\): standing by/);
    });
  });
});
