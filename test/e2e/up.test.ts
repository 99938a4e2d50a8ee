/**
 * `shrooms-agent up` keeps its parts alive: the demo bridge, the gateway and NATS itself are each
 * killed with SIGKILL under a running `up`; each comes back (NATS first, on the same port and data)
 * and the demo session answers again through the gateway. Ctrl-C then stops every part, and the
 * restarts are in logs/up.log.
 */
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { connect } from '@nats-io/transport-node';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, childProcesses, eventually, freePort, isAlive, rpc, runTs, type ServiceProcess } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let up: ServiceProcess;
let state: string;
let gatewayUrl: string;
let asks = 0;
const seenPids = new Set<number>();

/** The pid of up's child whose command line matches `re`. */
async function pidOf(re: RegExp): Promise<number> {
  return eventually(async () => {
    const pid = (await childProcesses(up.child.pid!)).find((k) => re.test(k.cmdline))?.pid;
    if (pid) seenPids.add(pid);
    return pid;
  }, 30_000);
}

/** A new ask to the demo session, answered by its echo harness through the gateway. */
async function answered(): Promise<boolean> {
  const text = `ping ${++asks}`;
  const r = await eventually(
    async () => {
      const res = await rpc(`${gatewayUrl}/a2a/demo`, 'SendMessage', {
        message: { messageId: `up-${asks}`, role: 'ROLE_USER', parts: [{ text }] },
      });
      return res.result?.task?.status.state === 'TASK_STATE_COMPLETED' ? res.result.task : undefined;
    },
    60_000,
    250,
  );
  return r.artifacts?.[0]?.parts?.[0]?.text === text;
}

/** Kills the part, waits for up to say it is back with a new pid, and returns that pid. */
async function killAndWaitBack(name: string, pid: number): Promise<number> {
  process.kill(pid, 'SIGKILL');
  const line = await up.waitFor(new RegExp(`${name} is back \\(pid (\\d+), restart 1\\)`), 90_000);
  const back = Number(/pid (\d+)/.exec(line)![1]);
  expect(back).not.toBe(pid);
  return back;
}

beforeAll(async () => {
  state = await mkdtemp(join(tmpdir(), 'shrooms-up-'));
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  // As `./shrooms up` runs it: the compiled CLI (built by the project's global setup).
  up = runTs(
    CLI,
    ['up', '--port', String(port), '--no-scheduler'],
    { SHROOMS_STATE_DIR: state, SHROOMS_MACHINE: 'upbox' },
    { built: true },
  );
  await up.waitFor(/Press Ctrl-C to stop/, 120_000);
}, 150_000);

afterAll(async () => {
  await up?.stop();
  for (const pid of seenPids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(state, { recursive: true, force: true });
});

describe('up runs NATS with users', () => {
  it('refuses an anonymous login and keeps its credentials and logs to their owner', async () => {
    const url = /NATS {10}(nats:\/\/\S+)/.exec(up.output())![1]!;
    await expect(connect({ servers: url, reconnect: false })).rejects.toThrow(/Authorization/i);
    const auth = join(state, 'nats-auth');
    for (const dir of [state, auth, join(state, 'logs'), join(state, 'nats')]) expect((await stat(dir)).mode & 0o777, dir).toBe(0o700);
    const files = [
      ...(await readdir(auth)).map((f) => join(auth, f)),
      ...(await readdir(join(state, 'logs'))).map((f) => join(state, 'logs', f)),
    ];
    for (const f of files) expect((await stat(f)).mode & 0o777, f).toBe(0o600);
    const { NATS_PASS } = Object.fromEntries(
      (await readFile(join(auth, 'bridge.env'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => l.split('=')),
    ) as Record<string, string>;
    const nc = await connect({ servers: url, user: 'bridge', pass: NATS_PASS!, reconnect: false });
    await nc.close();
    for (const f of files.filter((f) => f.endsWith('.log'))) expect(await readFile(f, 'utf8'), f).not.toContain(NATS_PASS!);
    expect(up.output()).not.toContain(NATS_PASS!);
  });
});

describe('up supervises its parts', () => {
  it('restarts a killed bridge, and the session answers again', async () => {
    expect(await answered()).toBe(true);
    const pid = await pidOf(/ bridge .*--session demo/);
    expect(up.output()).not.toMatch(/bridge-demo exited unexpectedly/);
    await killAndWaitBack('bridge-demo', pid);
    expect(up.output()).toMatch(/bridge-demo exited unexpectedly \(signal SIGKILL\); restarting in 0\.5 s/);
    expect(await answered()).toBe(true);
  });

  it('restarts a killed gateway, and it serves again on the same port', async () => {
    const pid = await pidOf(/ gateway$/);
    await killAndWaitBack('gateway', pid);
    expect(await answered()).toBe(true);
  });

  it('restarts a killed nats-server first, on the same port and data; the others reconnect', async () => {
    const pid = await pidOf(/nats-server/);
    await killAndWaitBack('nats', pid);
    expect(up.output()).toMatch(/nats exited unexpectedly \(signal SIGKILL\); restarting in 0\.5 s, the others wait for it/);
    // The ledger kept what it had: the first ask is still there.
    const first = await eventually(async () => (await rpc(`${gatewayUrl}/a2a/demo`, 'GetTask', { id: 'demo:up-1' })).result, 60_000, 250);
    expect(first.status.state).toBe('TASK_STATE_COMPLETED');
    expect(await answered()).toBe(true);
  });

  it('logs each exit and restart, and Ctrl-C stops every part', async () => {
    // Our parts only: the compiled CLI's services and NATS (no loader helpers beside them).
    const parts = (await childProcesses(up.child.pid!)).filter((k) => /nats-server|dist\/main\.js (gateway|guard|bridge)/.test(k.cmdline));
    expect(parts).toHaveLength(4);
    for (const k of parts) seenPids.add(k.pid);
    up.child.kill('SIGINT');
    expect(await up.stop()).toBe(0);
    for (const pid of seenPids) expect(isAlive(pid), `pid ${pid} still running`).toBe(false);
    const log = (await readFile(join(state, 'logs', 'up.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { part: string; event: string });
    const events = log.map((e) => `${e.part} ${e.event}`);
    expect(events).toEqual([
      'bridge-demo exited',
      'bridge-demo restarted',
      'gateway exited',
      'gateway restarted',
      'nats exited',
      'nats restarted',
    ]);
  });
});
