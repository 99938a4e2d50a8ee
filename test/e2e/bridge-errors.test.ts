/**
 * A bridge that cannot work says so within seconds, with what to do, instead of retrying in
 * silence: NATS unreachable, the gateway unreachable, a login NATS refuses, the harness CLI missing,
 * no local mesh to join. Each waits for the line with a generous bound; none measures time.
 */
import { join } from 'node:path';
import { CLI, freePort, runTs, startNatsServer, tempDir, type NatsServerHandle, type ServiceProcess, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let temp: TempDir | undefined;
let dir: string;
const running: ServiceProcess[] = [];

/** A bridge as a person starts it, with only `env` saying where things are. */
function bridge(args: string[], env: Record<string, string | undefined>): ServiceProcess {
  const p = runTs(
    CLI,
    ['bridge', '--session', 'lost', '--cwd', dir, ...args],
    {
      NATS_URL: undefined,
      NATS_USER: undefined,
      NATS_PASS: undefined,
      SHROOMS_GATEWAY_URL: undefined,
      GATEWAY_URL: undefined,
      SHROOMS_STATE_DIR: join(dir, 'no-up-here'),
      XDG_STATE_HOME: join(dir, 'xdg'),
      ...env,
    },
    { built: true },
  );
  running.push(p);
  return p;
}

const exitOf = (p: ServiceProcess) =>
  p.child.exitCode !== null ? Promise.resolve(p.child.exitCode) : new Promise<number | null>((r) => p.child.once('exit', r));

beforeAll(async () => {
  temp = await tempDir('shrooms-bridge-errors');
  dir = temp.path;
});

afterAll(async () => {
  try {
    await Promise.all(running.map((p) => p.stop()));
  } finally {
    await temp?.remove();
  }
});

describe('a bridge that cannot work says what is wrong', () => {
  it('says NATS cannot be reached, why, and what to do; and that the gateway does not answer', async () => {
    const [nats, gw] = [await freePort(), await freePort()];
    const p = bridge([], { NATS_URL: `nats://127.0.0.1:${nats}`, SHROOMS_GATEWAY_URL: `http://127.0.0.1:${gw}` });
    await p.waitFor(
      new RegExp(
        `cannot reach NATS at nats://127\\.0\\.0\\.1:${nats} \\(connection refused\\); still trying\\. Start the mesh \\(\`shrooms-agent up\`\\) or set NATS_URL`,
      ),
      60_000,
    );
    await p.waitFor(
      new RegExp(`the gateway at http://127\\.0\\.0\\.1:${gw} does not answer \\(connection refused\\).*set SHROOMS_GATEWAY_URL`),
      60_000,
    );
  });

  it('stops at once, saying which login NATS refused', async () => {
    let server: NatsServerHandle | undefined;
    try {
      server = await startNatsServer({ args: ['--user', 'someone', '--pass', 'right'] });
      const p = bridge([], { NATS_URL: server.url, NATS_USER: 'someone', NATS_PASS: 'wrong' });
      expect(await exitOf(p)).toBe(1);
      expect(p.output()).toMatch(/refused the login of user someone: check NATS_USER\/NATS_PASS/);
      expect(p.output()).not.toContain('wrong');
    } finally {
      await server?.stop();
    }
  });

  it('stops at once when the harness CLI is not there, saying where it looked and what to do', async () => {
    const p = bridge(['--harness', 'claude'], { SHROOMS_CLAUDE_BIN: join(dir, 'no-such-claude'), NATS_URL: 'nats://127.0.0.1:1' });
    expect(await exitOf(p)).toBe(1);
    expect(p.output()).toMatch(
      /cannot start the claude harness: Claude Code \(`claude`\) is not there \(looked for \S+no-such-claude\): .*SHROOMS_CLAUDE_BIN/,
    );
  });

  it('says when there is no local mesh to join and what it tries instead', async () => {
    const p = bridge([], {});
    await p.waitFor(
      /no local mesh \(\S+local-mesh\.json is not there: `shrooms-agent up` is not running with this state folder\) and NATS_URL is not set: trying nats:\/\/127\.0\.0\.1:4222/,
      60_000,
    );
  });
});
