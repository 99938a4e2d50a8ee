/**
 * `shrooms-agent a2a | mcp | config` as a person or a shell-minded agent runs them: each command a
 * subprocess against a mesh of real processes (nats-server, gateway, echo bridges); `--json` output
 * parsed, exit codes 0/1/2 checked, errors one line saying what to do. Waits that end before the task,
 * are interrupted or see it queued: cli-wait.test.ts; schedules: cli-schedule.test.ts.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, tempDir, wrap } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClientMesh, type ClientMesh } from './support/client-mesh.js';

const M = 'clibox';
let mesh: ClientMesh;

beforeAll(async () => {
  mesh = await startClientMesh({ machine: M, sessions: [{ name: 'demo' }, { name: 'slow', env: { ECHO_DELAY_MS: '600000' } }] });
});
afterAll(async () => {
  await mesh?.stop();
});

const json = (s: string) => JSON.parse(s) as any;
const oneLine = (s: string) => s.trimEnd().split('\n').length === 1;

describe('help', () => {
  const commands = [
    ['a2a', '--help'],
    ['a2a', 'list', '--help'],
    ['a2a', 'send', '--help'],
    ['a2a', 'get', '--help'],
    ['a2a', 'cancel', '--help'],
    ['a2a', 'ack', '--help'],
    ['a2a', 'update', '--help'],
    ['a2a', 'tasks', '--help'],
    ['a2a', 'schedule', '--help'],
    ['mcp', '--help'],
    ['config', '--help'],
  ];
  it.each(commands.map((c) => [c.join(' '), c] as const))('prints usage for %s', async (_, args) => {
    const r = await mesh.cli(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: shrooms-agent /);
  });
});

describe('the name a person typed', () => {
  it('names ./shrooms in usage lines and errors when it was typed so, and leaves the data alone', async () => {
    const typed = { SHROOMS_CLI_NAME: './shrooms' };
    const help = await mesh.cli(['a2a', 'send', '--help'], typed);
    expect(help.stdout).toMatch(/^usage: \.\/shrooms a2a send TO TEXT/);
    expect(help.stdout).not.toMatch(/shrooms-agent a2a/);
    const wrong = await mesh.cli(['a2a', 'send'], typed);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^\.\/shrooms a2a send: say who to ask/);
    const sent = await mesh.cli(['a2a', 'send', 'demo', 'run shrooms-agent logs', '--wait', '--json'], typed);
    expect(json(sent.stdout).reply).toBe('run shrooms-agent logs');
  });

  it("runs in the folder it was typed in: a bridge started through the checkout's ./shrooms from elsewhere serves that folder", async () => {
    const folder = await tempDir('shrooms-typed-here');
    // The front door as a person runs it, from their own folder (it installs nothing here: the test
    // command has; it builds when a source changed).
    const typed = (args: string[], env: Record<string, string> = {}) =>
      wrap(
        spawn(join(REPO_ROOT, 'shrooms'), args, {
          cwd: folder.path,
          env: { ...process.env, ...mesh.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
    const refused = typed(['bridge', '--harness', 'echo', '--session', 'here', '--nope']);
    const served = typed(['bridge', '--harness', 'echo', '--session', 'here'], { BRIDGE_STATE_DIR: join(folder.path, '.bridge-state') });
    try {
      await expect.poll(() => refused.child.exitCode, { timeout: 60_000 }).toBe(1);
      // Named as typed: the checkout's script by its path, not ./shrooms (which is not here).
      expect(refused.output()).toContain(`${join(REPO_ROOT, 'shrooms')} bridge: unknown option --nope (see --help)`);
      await served.waitFor(/bridge ready/, 120_000);
      const listed = json((await mesh.cli(['a2a', 'list', '--json'])).stdout);
      expect(listed.agents.find((a: { name: string }) => a.name === `${M}/here`)).toMatchObject({ cwd: folder.path });
    } finally {
      await Promise.all([refused.kill(), served.stop()]);
      await folder.remove();
    }
  });
});

describe('a2a', () => {
  it('lists the sessions on the mesh', async () => {
    const r = await mesh.cli(['a2a', 'list', '--json']);
    expect(r.code).toBe(0);
    const names = json(r.stdout).agents.map((a: { name: string }) => a.name);
    expect(names).toEqual(expect.arrayContaining([`${M}/demo`, `${M}/slow`]));
    const human = await mesh.cli(['a2a', 'list']);
    expect(human.stdout).toMatch(new RegExp(`^AGENT\\s+HARNESS\\s+STATE\\s+TASK\\s+OPEN\\s+QUEUED\\s+DIRECTORY\n`));
    expect(human.stdout).toMatch(new RegExp(`^${M}/demo\\s+echo\\s+idle\\s+-\\s+0\\s+0\\s+/`, 'm')); // no task: "-"
  });

  it('send without --wait prints the task name at once', async () => {
    const r = await mesh.cli(['a2a', 'send', 'demo', 'hello', 'there']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(new RegExp(`^${M}/demo:cli-\\d{8}T\\d{6}-[0-9a-f]{8}$`));
  });

  it('send --wait prints the reply; get, tasks and ack see the same task', async () => {
    const r = await mesh.cli(['a2a', 'send', 'demo', 'ping', '--wait']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('ping\n');

    const sent = await mesh.cli(['a2a', 'send', `${M}/demo`, 'pong', '--wait', '--json']);
    expect(sent.code).toBe(0);
    const t = json(sent.stdout);
    expect(t).toMatchObject({ agent: `${M}/demo`, status: 'completed', reply: 'pong', waitedOut: false, finished: true });
    expect(t.a2aTask.status.state).toBe('TASK_STATE_COMPLETED');

    const got = await mesh.cli(['a2a', 'get', t.task, '--json']);
    expect(got.code).toBe(0);
    expect(json(got.stdout)).toMatchObject({ task: t.task, status: 'completed', reply: 'pong', acknowledged: false });
    const bare = await mesh.cli(['a2a', 'get', t.task.slice(M.length + 1)]);
    expect(bare.stdout).toBe(`${t.task} completed\npong\n`);

    const list = await mesh.cli(['a2a', 'tasks', 'demo', '--json', '--limit', '100']);
    expect(list.code).toBe(0);
    expect(json(list.stdout).tasks.map((x: { task: string }) => x.task)).toContain(t.task);

    const ack = await mesh.cli(['a2a', 'ack', t.task]);
    expect(ack.code).toBe(0);
    expect(json((await mesh.cli(['a2a', 'get', t.task, '--json'])).stdout).acknowledged).toBe(true);
  });

  it('reads the text from stdin with "-"', async () => {
    const r = await mesh.cli(['a2a', 'send', 'demo', '-', '--wait'], {}, { stdin: 'from a pipe\n' });
    expect(r.stdout).toBe('from a pipe\n');
  });

  it('refuses to cancel a finished task: exit 2, one line', async () => {
    const t = json((await mesh.cli(['a2a', 'send', 'demo', 'quick', '--wait', '--json'])).stdout).task;
    const r = await mesh.cli(['a2a', 'cancel', t]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toBe(true);
    expect(r.stderr).toMatch(/already TASK_STATE_COMPLETED \[TASK_NOT_CANCELABLE\]/);
  });

  it('answers a blocked task with send --task', async () => {
    // The worker (here: the test, as session slow) says it is blocked; the asker answers.
    const sent = json((await mesh.cli(['a2a', 'send', 'slow', 'deploy it', '--json'])).stdout);
    const blocked = await mesh.cli(['a2a', 'update', sent.task, 'blocked', 'which', 'branch?', '--json'], {
      SHROOMS_AGENT_SESSION: 'slow',
    });
    expect(blocked.code).toBe(0);
    expect(json(blocked.stdout)).toMatchObject({ status: 'input-required', reply: 'which branch?' });
    const human = await mesh.cli(['a2a', 'get', sent.task]);
    expect(human.stdout).toMatch(/needs input: which branch\?\nanswer it: shrooms-agent a2a send --task/);
    const answer = await mesh.cli(['a2a', 'send', '--task', sent.task, 'main', '--json']);
    expect(answer.code).toBe(0);
    expect(json(answer.stdout).task).toBe(sent.task);
    expect(['queued', 'submitted', 'working']).toContain(json(answer.stdout).status);
  });

  it('update by the worker finishes its task; by another session it is refused (exit 2)', async () => {
    const sent = json((await mesh.cli(['a2a', 'send', 'slow', 'run the suite', '--json'])).stdout);
    const refused = await mesh.cli(['a2a', 'update', sent.task, 'done', 'not mine'], { SHROOMS_AGENT_SESSION: 'demo' });
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toBe(true);
    expect(refused.stderr).toMatch(/\[UPDATE_FORBIDDEN\]/);
    const nobody = await mesh.cli(['a2a', 'update', sent.task, 'done', 'who am i']);
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toMatch(/set SHROOMS_AGENT_SESSION/);

    const done = await mesh.cli(['a2a', 'update', sent.task, 'done', 'all', 'green', '--json'], { SHROOMS_AGENT_SESSION: `${M}/slow` });
    expect(done.code).toBe(0);
    expect(json(done.stdout)).toMatchObject({ status: 'completed', reply: 'all green' });
    const seen = await mesh.cli(['a2a', 'get', sent.task, '--wait', '--json']);
    expect(json(seen.stdout)).toMatchObject({ status: 'completed', reply: 'all green', waitedOut: false });
  });

  it('a failed task exits 2', async () => {
    const sent = json((await mesh.cli(['a2a', 'send', 'slow', 'try it', '--json'])).stdout);
    expect((await mesh.cli(['a2a', 'update', sent.task, 'failed', 'disk', 'full'], { SHROOMS_AGENT_SESSION: 'slow' })).code).toBe(0);
    const r = await mesh.cli(['a2a', 'get', sent.task]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe(`${sent.task} failed: disk full\n`);
    // Sent again (the same message id), the failed task is what comes back: exit 2, with --json or not.
    const id = sent.task.split(':').at(-1);
    for (const json of [[], ['--json']]) {
      const again = await mesh.cli(['a2a', 'send', 'slow', 'try it', '--id', id, ...json]);
      expect(again.code, `send again ${json.join(' ')}`).toBe(2);
    }
  });

  it('a bad task name is a one-line usage error (exit 1)', async () => {
    for (const cmd of ['get', 'cancel', 'ack']) {
      const r = await mesh.cli(['a2a', cmd, 'not-a-task']);
      expect(r.code).toBe(1);
      expect(oneLine(r.stderr)).toBe(true);
      expect(r.stderr).toMatch(/is not a task name; write MACHINE\/SESSION:ID or SESSION:ID/);
    }
  });

  it('a task that does not exist is named as the person wrote it, by every command (exit 1)', async () => {
    for (const cmd of ['get', 'cancel', 'ack', 'release', 'reject']) {
      const missing = await mesh.cli(['a2a', cmd, 'demo:no-such.message']);
      expect(missing.code, cmd).toBe(1);
      expect(missing.stderr, cmd).toBe(`shrooms-agent a2a ${cmd}: no task demo:no-such.message on ${M}/demo [TASK_NOT_FOUND]\n`);
    }
  });

  it('an unknown session and an unknown option are one-line errors (exit 1)', async () => {
    const r = await mesh.cli(['a2a', 'send', 'nobody-here', 'hi', '--json']);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(true);
    expect(json(r.stdout).error.key).toBe('SESSION_NOT_FOUND');
    // With the sessions there are: most often a name was mistyped.
    expect(json(r.stdout).error.message).toMatch(new RegExp(`^no session ${M}/nobody-here \\(sessions now: (.+, )?${M}/demo[,)]`));
    const opt = await mesh.cli(['a2a', 'send', 'demo', 'x', '--bogus']);
    expect(opt.code).toBe(1);
    expect(oneLine(opt.stderr)).toBe(true);
    // A state the dashboard filters by but ListTasks has not: where those tasks are.
    const queued = await mesh.cli(['a2a', 'tasks', 'demo', '--state', 'queued']);
    expect(queued.code).toBe(1);
    expect(queued.stderr).toBe(
      'shrooms-agent a2a tasks: unknown state "queued": one of submitted, working, input-required, completed, failed, canceled, rejected; ' +
        'queued tasks are submitted ones: --state submitted (STATUS tells them apart) (see --help)\n',
    );
  });

  it('a bridge refuses a session name the protocol refuses, in one line, before connecting (exit 1)', async () => {
    for (const name of ['a.> *', '.a', 'x'.repeat(65)]) {
      // NATS_URL points nowhere: a bridge that got as far as connecting would fail differently.
      const r = await mesh.cli(['bridge', '--harness', 'echo', '--session', name], { NATS_URL: 'nats://127.0.0.1:1' });
      expect(r.code, name).toBe(1);
      expect(r.stderr).toBe(
        `shrooms-agent bridge: the session name ${JSON.stringify(name)} is not valid: use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters\n`,
      );
    }
  });

  it('an unreachable gateway says what to do, in one line (exit 1)', async () => {
    for (const args of [
      ['a2a', 'list'],
      ['a2a', 'send', 'demo', 'hi', '--wait'],
      ['a2a', 'get', 'demo:x'],
    ]) {
      const r = await mesh.cli(args, { SHROOMS_GATEWAY_URL: 'http://127.0.0.1:1' });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `shrooms-agent ${args.slice(0, 2).join(' ')}: cannot reach the gateway at http://127.0.0.1:1 — is \`shrooms-agent up\` running? (set SHROOMS_GATEWAY_URL if it listens elsewhere)\n`,
      );
    }
  });
});

describe('config', () => {
  it('prints the Claude Code and pi setup of a session as JSON', async () => {
    const r = await mesh.cli(['config', '--session', 'demo', '--json']);
    expect(r.code).toBe(0);
    const c = json(r.stdout);
    expect(c.env).toEqual({ SHROOMS_MACHINE: M, SHROOMS_AGENT_SESSION: 'demo', SHROOMS_GATEWAY_URL: mesh.gatewayUrl });
    expect(c.claude.mcpConfig.mcpServers.shrooms).toMatchObject({ type: 'stdio', command: process.execPath });
    // What the session starts is the compiled CLI, even when this one runs from its sources.
    expect(c.claude.mcpConfig.mcpServers.shrooms.args).toEqual([join(REPO_ROOT, 'services/shrooms-agent/bundle/main.js'), 'mcp']);
    expect(c.pi.args[0]).toBe('-e');
    const http = json((await mesh.cli(['config', '--session', 'demo', '--http-port', '7390', '--json'])).stdout);
    expect(http.claude.mcpConfig.mcpServers.shrooms).toEqual({ type: 'http', url: 'http://127.0.0.1:7390/mcp' });
    expect(http.pi.env.SHROOMS_MCP_URL).toBe('http://127.0.0.1:7390/mcp');
    // The text form's command line lets the same tools run without asking as the JSON (and the
    // bridge): the read-only ones, never ask_agent or schedule_task.
    const allowed = c.claude.args[c.claude.args.indexOf('--allowedTools') + 1] as string;
    expect(allowed.split(',')).not.toContain('mcp__shrooms__ask_agent');
    const text = await mesh.cli(['config', '--session', 'demo']);
    expect(text.stdout).toContain(` --allowedTools ${allowed} `);
    expect(text.stdout).not.toMatch(/--allowedTools mcp__shrooms\b(?!__)/);
  });

  it('needs a session (exit 1) and prints the note alone with --note', async () => {
    const r = await mesh.cli(['config'], { SHROOMS_AGENT_SESSION: '' });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(true);
    const note = await mesh.cli(['config', '--session', 'demo', '--note']);
    expect(note.stdout).toMatch(new RegExp(`^You are ${M}/demo, a session on the shrooms agent mesh`));
  });
});
