/**
 * `shrooms-agent up` keeps its parts alive: the demo bridge, the gateway and NATS itself are each
 * killed with SIGKILL under a running `up`; each comes back (NATS first, on the same port and data)
 * and the demo session answers again through the gateway. Ctrl-C then stops every part, and the
 * restarts are in logs/up.log. Before that, a bridge and the CLI started by hand next to it find
 * the mesh with no connection settings, the bridge as a NATS user of its own session alone.
 *
 * Over 300 lines: one running `up` for the file; each case needs that mesh as a person has it.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { connect } from '@nats-io/transport-node';
import { join } from 'node:path';
import {
  CLI,
  childProcesses,
  eventually,
  freePort,
  isAlive,
  parseUpOutput,
  rpc,
  runTs,
  tempDir,
  type ServiceProcess,
  type TempDir,
} from '@shrooms/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let up: ServiceProcess;
let stateDir: TempDir | undefined;
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
  stateDir = await tempDir('shrooms-up');
  state = stateDir.path;
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  // As `./shrooms up` runs it: the compiled CLI (built by the project's global setup).
  up = runTs(CLI, ['up', '--port', String(port)], { SHROOMS_STATE_DIR: state, SHROOMS_MACHINE: 'upbox' }, { built: true });
  await up.waitFor(/Press Ctrl-C to stop/, 120_000);
}, 150_000);

afterAll(async () => {
  try {
    await up?.stop();
    for (const pid of seenPids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  } finally {
    await stateDir?.remove();
  }
});

describe('up runs NATS with users', () => {
  it('refuses an anonymous login and keeps its credentials and logs to their owner', async () => {
    const url = parseUpOutput(up.output()).natsUrl;
    await expect(connect({ servers: url, reconnect: false })).rejects.toThrow(/Authorization/i);
    const auth = join(state, 'nats-auth');
    for (const dir of [state, auth, join(state, 'logs'), join(state, 'nats')]) expect((await stat(dir)).mode & 0o777, dir).toBe(0o700);
    const files = [
      ...(await readdir(auth)).map((f) => join(auth, f)),
      ...(await readdir(join(state, 'logs'))).map((f) => join(state, 'logs', f)),
    ];
    for (const f of files) expect((await stat(f)).mode & 0o777, f).toBe(0o600);
    const { NATS_PASS } = Object.fromEntries(
      (await readFile(join(auth, 'admin.env'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => l.split('=')),
    ) as Record<string, string>;
    const nc = await connect({ servers: url, user: 'admin', pass: NATS_PASS!, reconnect: false });
    await nc.close();
    for (const f of files.filter((f) => f.endsWith('.log'))) expect(await readFile(f, 'utf8'), f).not.toContain(NATS_PASS!);
    expect(up.output()).not.toContain(NATS_PASS!);
    // No machine-wide bridge login is left lying about for people to take.
    expect(await readdir(auth)).not.toContain('bridge.env');
  });

  it('writes where its mesh is to local-mesh.json, 0600, without a password', async () => {
    const file = join(state, 'local-mesh.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const mesh = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    expect(mesh).toMatchObject({ machine: 'upbox', gatewayUrl, pid: up.child.pid, sessionUsers: join(state, 'up.sock') });
    expect(mesh.natsUrl).toBe(parseUpOutput(up.output()).natsUrl);
    expect(JSON.stringify(mesh)).not.toMatch(/pw[0-9a-f]{48}/);
  });
});

/** Nothing in the environment says where the mesh is: what a person's fresh shell has. */
const bare = {
  NATS_URL: undefined,
  NATS_USER: undefined,
  NATS_PASS: undefined,
  NATS_CREDS: undefined,
  NATS_TOKEN: undefined,
  SHROOMS_GATEWAY_URL: undefined,
  GATEWAY_URL: undefined,
  SHROOMS_MACHINE: undefined,
};

/** One line to up's socket, one line back. */
function askUp(line: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const c = createConnection(join(state, 'up.sock'));
    let buf = '';
    c.on('connect', () => c.write(`${line}\n`));
    c.on('data', (d) => (buf += d.toString()));
    c.on('end', () => resolve(JSON.parse(buf) as Record<string, string>));
    c.on('error', reject);
  });
}

describe('a bridge started by hand next to up', () => {
  let bridge: ServiceProcess | undefined;
  let cwd: TempDir | undefined;
  /** Where the bridge serves its session's tools (MCP over HTTP). */
  let mcpPort = 0;
  afterAll(async () => {
    try {
      await bridge?.stop();
    } finally {
      await cwd?.remove();
    }
  });

  it('joins with no connection flags or variables, and its session answers an ask', async () => {
    cwd = await tempDir('shrooms-hand');
    // SHROOMS_STATE_DIR is where this test's `up` keeps its state (a person's is the repository's .state/).
    mcpPort = await freePort();
    bridge = runTs(
      CLI,
      ['bridge', '--harness', 'echo', '--session', 'byhand', '--cwd', cwd.path],
      { ...bare, SHROOMS_STATE_DIR: state, XDG_STATE_HOME: join(cwd.path, 'xdg'), BRIDGE_MCP_PORT: String(mcpPort) },
      { built: true },
    );
    await bridge.waitFor(/bridge ready for upbox\/byhand/, 60_000);
    expect(bridge.output()).toMatch(/joining the local mesh of .*local-mesh\.json: upbox\/byhand, NATS nats:\/\/\S+ as session-byhand/);
    expect(up.output()).toMatch(/NATS user session-byhand made for a bridge of upbox\/byhand started by hand/);
    const res = await rpc(`${gatewayUrl}/a2a/byhand`, 'SendMessage', {
      message: { messageId: 'hand-1', role: 'ROLE_USER', parts: [{ text: 'by hand' }] },
      configuration: { returnImmediately: false },
    });
    const task = await eventually(async () => {
      const t = (await rpc(`${gatewayUrl}/a2a/byhand`, 'GetTask', { id: res.result?.task?.id ?? 'byhand:hand-1' })).result;
      return t?.status.state === 'TASK_STATE_COMPLETED' ? t : undefined;
    }, 30_000);
    expect(task.artifacts?.[0]?.parts?.[0]?.text).toBe('by hand');
  });

  it('logs to a file of its own, which `logs SESSION` shows; `logs PART` shows a part of up', async () => {
    const env = { ...bare, SHROOMS_STATE_DIR: state, XDG_STATE_HOME: join(String(bridge!.child.spawnargs.at(-1)), 'xdg') };
    const own = runTs(CLI, ['logs', 'byhand', '--no-follow', '-n', '200'], env, { built: true });
    expect(await new Promise((resolve) => own.child.once('exit', resolve)), own.output()).toBe(0);
    expect(own.output()).toMatch(/bridges\/upbox-byhand\/bridge\.log/);
    expect(own.output()).toMatch(/INFO {2}\[bridge byhand\] bridge ready for upbox\/byhand/);
    // Listed with how long ago each was written, the one written last first.
    const listed = runTs(CLI, ['logs'], env, { built: true });
    expect(await new Promise((resolve) => listed.child.once('exit', resolve)), listed.output()).toBe(0);
    expect(listed.output()).toMatch(/^bridge upbox-byhand +\d+ (s|min) ago +\/\S+\/bridge\.log$/m);
    const part = runTs(CLI, ['logs', 'gateway', '--no-follow'], env, { built: true });
    expect(await new Promise((resolve) => part.child.once('exit', resolve)), part.output()).toBe(0);
    expect(part.output()).toMatch(/logs\/gateway\.log/);
    expect(part.output()).toMatch(/\[gateway\] /);
  });

  it("serves its session's schedule tools, though its NATS user may not ask the scheduler itself", async () => {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${mcpPort}/mcp`)));
    try {
      const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as any;
      const made = await call('schedule_task', { to: 'upbox/demo', text: 'from a session by hand', in: '1h' });
      expect(made.isError, JSON.stringify(made)).toBeFalsy();
      const canceled = await call('cancel_schedule', { id: made.structuredContent.schedule.id });
      expect(canceled.structuredContent?.schedule.state, JSON.stringify(canceled)).toBe('canceled');
    } finally {
      await client.close();
    }
  });

  it('gets a user of its own session alone, not the machine-wide one', async () => {
    const login = await askUp(JSON.stringify({ session: 'byhand' }));
    expect(login.NATS_USER).toBe('session-byhand');
    const url = parseUpOutput(up.output()).natsUrl;
    const nc = await connect({ servers: url, user: login.NATS_USER, pass: login.NATS_PASS, reconnect: false });
    try {
      // The demo session's deliveries are not this user's to read.
      const refused = new Promise<string>((resolve) => {
        void (async () => {
          for await (const s of nc.status()) if (s.type === 'error') resolve(String((s as { error?: Error }).error?.message ?? s.type));
        })();
      });
      nc.subscribe('shrooms.bridge.upbox.demo.deliver');
      expect(await refused).toMatch(/Permissions Violation for Subscription to "shrooms\.bridge\.upbox\.demo\.deliver"/);
    } finally {
      await nc.close();
    }
    expect(await askUp(JSON.stringify({ session: '../x' }))).toMatchObject({ error: expect.stringMatching(/not valid/) });
  });

  it('lets `a2a list` and `config` find the mesh with no flags', async () => {
    const list = runTs(CLI, ['a2a', 'list', '--json'], { ...bare, SHROOMS_STATE_DIR: state }, { built: true });
    expect(await new Promise((resolve) => list.child.once('exit', resolve))).toBe(0);
    const names = (JSON.parse(list.output()) as { agents: { name: string }[] }).agents.map((a) => a.name);
    expect(names).toEqual(expect.arrayContaining(['upbox/demo', 'upbox/byhand']));
    // config prints a session's setup pointing at this mesh's gateway, with no flags either.
    const config = runTs(CLI, ['config', '--session', 'byhand', '--json'], { ...bare, SHROOMS_STATE_DIR: state }, { built: true });
    expect(await new Promise((resolve) => config.child.once('exit', resolve))).toBe(0);
    expect((JSON.parse(config.output()) as { env: Record<string, string> }).env).toMatchObject({
      SHROOMS_GATEWAY_URL: gatewayUrl,
      SHROOMS_MACHINE: 'upbox',
    });
  });
});

/** The exit code of a process that ends by itself. */
function exitOf(p: ServiceProcess): Promise<number | null> {
  if (p.child.exitCode !== null) return Promise.resolve(p.child.exitCode);
  return new Promise((resolve) => p.child.once('exit', (code) => resolve(code)));
}

describe('one up per state folder', () => {
  it('refuses a second up on the same state folder, naming the first, and leaves its mesh as it was', async () => {
    const before = await readFile(join(state, 'local-mesh.json'), 'utf8');
    const second = runTs(
      CLI,
      ['up', '--port', String(await freePort())],
      { SHROOMS_STATE_DIR: state, SHROOMS_MACHINE: 'upbox' },
      { built: true },
    );
    expect(await exitOf(second)).toBe(1);
    expect(second.output()).toContain(`another \`up\` (pid ${up.child.pid}) runs with the state folder ${state}: stop it first`);
    expect(second.output()).not.toMatch(/nats-server|is up on/);
    expect(await readFile(join(state, 'local-mesh.json'), 'utf8')).toBe(before);
    expect(await readFile(join(state, 'up.pid'), 'utf8')).toBe(`${up.child.pid}\n`);
    expect(await answered()).toBe(true);
  });

  it('says why a part did not start: a gateway port another process listens on', async () => {
    const own = await tempDir('shrooms-up-second');
    try {
      const port = new URL(gatewayUrl).port;
      const second = runTs(CLI, ['up', '--port', port], { SHROOMS_STATE_DIR: own.path, SHROOMS_MACHINE: 'upbox2' }, { built: true });
      expect(await exitOf(second)).toBe(1);
      expect(second.output()).toContain(
        `gateway did not start: shrooms-agent: listen EADDRINUSE: address already in use 127.0.0.1:${port} (log: ${join(own.path, 'logs', 'gateway.log')})`,
      );
      // It stopped what it had started, and gave its folder back.
      expect(await readdir(own.path)).not.toContain('up.pid');
      // The parts still starting were stopped with the rest, not left to time out on a NATS that was gone.
      for (const f of await readdir(join(own.path, 'logs')))
        expect(await readFile(join(own.path, 'logs', f), 'utf8'), f).not.toMatch(/timeout/);
      expect(await answered()).toBe(true);
    } finally {
      await own.remove();
    }
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
    const parts = (await childProcesses(up.child.pid!)).filter((k) =>
      /nats-server|shrooms-agent\/bundle\/main\.js (gateway|guard|bridge)/.test(k.cmdline),
    );
    // NATS, the gateway (admitting new tasks itself, GATEWAY_GUARD=local: no guard process) and the bridge.
    expect(parts).toHaveLength(3);
    expect(parts.filter((k) => /main\.js guard/.test(k.cmdline))).toEqual([]);
    for (const k of parts) seenPids.add(k.pid);
    up.child.kill('SIGINT');
    expect(await up.stop()).toBe(0);
    for (const pid of seenPids) expect(isAlive(pid), `pid ${pid} still running`).toBe(false);
    const log = (await readFile(join(state, 'logs', 'up.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { part?: string; event: string });
    const events = log.map((e) => `${e.part ?? 'up'} ${e.event}`);
    expect(events).toEqual([
      'up up',
      'bridge-demo exited',
      'bridge-demo restarted',
      'gateway exited',
      'gateway restarted',
      'nats exited',
      'nats restarted',
      'up stopped',
    ]);
    // `logs up` shows them as the terminal said them: which part, how it ended, when it was back; of
    // the entry's fields only what the sentence does not say already.
    const shown = runTs(CLI, ['logs', 'up', '--no-follow', '-n', '50'], { ...bare, SHROOMS_STATE_DIR: state }, { built: true });
    expect(await new Promise((resolve) => shown.child.once('exit', resolve)), shown.output()).toBe(0);
    expect(shown.output()).toMatch(
      /WARN {2}\[up\] gateway exited unexpectedly \(signal SIGKILL\); restarting in 0\.5 s \(delayMs=500, upMs=\d+\)$/m,
    );
    expect(shown.output()).toMatch(/INFO {2}\[up\] gateway is back \(pid \d+, restart 1\) \(event=restarted\)$/m);
  });
});
