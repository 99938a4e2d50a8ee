/**
 * The exit codes the help texts promise, pinned for every command and every `a2a` subcommand
 * (read from the help itself, so a new one is covered when it is listed): `--help` is 0, a flag
 * that does not exist or a missing argument is 1 with a line that says what to do, and a gateway
 * that does not answer is 1. What a task's end means (2 for one that failed you, 0 for an act that
 * was done such as `a2a reject`) is pinned where tasks run: cli.test.ts, mesh-auth.test.ts.
 */
import { CLI, runTs } from '@shrooms/testing';
import { describe, expect, it } from 'vitest';

/** Runs the compiled CLI with nothing that points at a mesh; resolves its exit code and output. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const p = runTs(
    CLI,
    args,
    {
      SHROOMS_GATEWAY_URL: 'http://127.0.0.1:1',
      SHROOMS_STATE_DIR: '/nonexistent/shrooms-exit-codes',
      SHROOMS_AGENT_SESSION: undefined,
      NATS_URL: undefined,
      ...env,
    },
    { built: true },
  );
  p.child.stdin?.end();
  const code = await new Promise<number | null>((r) => p.child.once('exit', r));
  return { code, out: p.output() };
}

/** `  name  summary` lines under "commands:" in a help text. */
function listed(help: string): string[] {
  const after = help.slice(help.indexOf('commands:\n') + 'commands:\n'.length);
  return [...after.matchAll(/^ {2}(\S+) /gm)].map((m) => m[1]!).filter((n) => /^[a-z0-9]+$/.test(n));
}

/** At most `n` at once: each is a node process. */
async function pool<T, R>(items: T[], n: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let i = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) {
        const k = i++;
        out[k] = await f(items[k]!);
      }
    }),
  );
  return out;
}

describe('exit codes', () => {
  it('are 0 for --help and 1 for usage mistakes, on every command', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    const commands = listed(top.out);
    expect(commands).toEqual(
      expect.arrayContaining(['up', 'bridge', 'gateway', 'guard', 'scheduler', 'a2a', 'mcp', 'config', 'mesh', 'logs']),
    );
    const cases: [string[], number][] = [
      [[], 1],
      [['no-such-command'], 1],
      ...commands.map((c): [string[], number] => [[c, '--help'], 0]),
      ...commands.filter((c) => !['gateway', 'guard', 'scheduler'].includes(c)).map((c): [string[], number] => [[c, '--no-such-flag'], 1]),
      [['bridge'], 1],
      [['bridge', '--session', 'a/b'], 1],
      [['config'], 1],
      [['a2a'], 1],
      [['mesh'], 1],
      [['logs', 'no-such-log'], 1],
    ];
    const got = await pool(cases, 4, async ([args]) => (await cli(args)).code);
    expect(got).toEqual(cases.map(([, code]) => code));
  });

  it('are 1 for an up whose GATEWAY_GUARD the gateway would refuse, said before anything starts', async () => {
    const bad = await cli(['up'], { GATEWAY_GUARD: 'sometimes' });
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('GATEWAY_GUARD must be local, service or off (got "sometimes")');
    expect(bad.out).not.toMatch(/nats-server|state folder/i);
  });

  it('are 0 for --help and 1 for usage mistakes or no gateway, on every a2a subcommand', async () => {
    const help = await cli(['a2a', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/Exit codes: 0 ok [\s\S]*2 the task shown or waited/);
    const subs = listed(help.out);
    expect(subs).toEqual(
      expect.arrayContaining(['list', 'send', 'get', 'cancel', 'ack', 'update', 'tasks', 'schedule', 'release', 'reject']),
    );
    const cases: [string[], number][] = [
      [['a2a', 'no-such-subcommand'], 1],
      ...subs.map((s): [string[], number] => [['a2a', s, '--help'], 0]),
      ...subs.map((s): [string[], number] => [['a2a', s, '--no-such-flag'], 1]),
      [['a2a', 'get'], 1],
      [['a2a', 'get', 'not a task'], 1],
      [['a2a', 'reject'], 1],
      [['a2a', 'list'], 1],
      [['a2a', 'get', 'demo:m-1'], 1],
    ];
    const results = await pool(cases, 4, async ([args]) => cli(args));
    expect(results.map((r) => r.code)).toEqual(cases.map(([, code]) => code));
    // No gateway: said so, with what to do.
    expect(results.at(-1)!.out).toMatch(/127\.0\.0\.1:1/);
  });
});
