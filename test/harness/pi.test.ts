/**
 * The pi adapter against the real `pi` CLI (the pinned dev dependency) in RPC mode, our pi
 * extension, the fake model server (OpenAI Chat Completions) and a real MCP server over streamable
 * HTTP — no real model, no network beyond loopback.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chain, nest, startFakeModel, tempDir, useTool, type FakeModel, type TempDir } from '@shrooms/testing';
import { harnessFactory, type Harness, type HarnessFactory } from '@shrooms/session-bridge';
import { startTestMcpServer, type TestMcpServer } from './mcp-tools.js';
import { harnessOptions, promptsOf, recorder, type Recorder } from './helpers.js';

type PiHarness = Harness & { readonly pid?: number; readonly sessionId?: string };

const HEADER = '[shrooms task harness-test:m-7 from laptop (laptop/webapp)]';

/** A project-local pi extension whose tool asks the user a question (a blocking dialog in RPC mode). */
const DIALOG_EXTENSION = `
export default function (pi) {
  pi.registerTool({
    name: 'ask_owner',
    label: 'Ask the owner',
    description: 'Asks the owner to confirm.',
    parameters: { type: 'object', properties: {} },
    async execute(_id, _params, _signal, _onUpdate, ctx) {
      const ok = await ctx.ui.confirm('Proceed?', 'The test asks.');
      return { content: [{ type: 'text', text: 'confirmed=' + ok }], details: {} };
    },
  });
}
`;

describe('the pi harness', () => {
  let fake: FakeModel;
  let mcp: TestMcpServer;
  let create: HarnessFactory;
  let root: TempDir;
  let cwd: string;
  let pi: PiHarness;
  let rec: Recorder;
  let second: PiHarness | undefined;
  const harnesses: Harness[] = [];

  function make(stateDir = join(root.path, 'state'), cancelGraceMs?: number): { h: PiHarness; rec: Recorder } {
    const r = recorder();
    // HOME is the test's own so pi writes nothing outside it.
    const env = {
      SHROOMS_MODEL_BASE_URL: `${fake.url}/v1`,
      SHROOMS_MODEL: 'fake-model',
      SHROOMS_MODEL_API_KEY: 'sk-fake',
      HOME: join(root.path, 'home'),
    };
    const h = create(harnessOptions({ stateDir, cwd, mcpUrl: mcp.url, env, events: r.events, cancelGraceMs })) as PiHarness;
    harnesses.push(h);
    return { h, rec: r };
  }

  beforeAll(async () => {
    fake = await startFakeModel({ slow: { chunks: 40, delayMs: 500 } });
    mcp = await startTestMcpServer({
      // B, a second pi session, answers A's ask_agent (a chain A → B).
      askAgent: async ({ text }) => {
        if (!second) return 'nobody there';
        const r = await second.send('b1', `[shrooms task b:m-8 from testbox (testbox/a)]\n${text}`);
        return `${r.status}: ${r.text}`;
      },
    });
    create = await harnessFactory('pi');
    root = await tempDir('shrooms-pi');
    cwd = join(root.path, 'project');
    await mkdir(join(cwd, '.pi', 'extensions'), { recursive: true });
    await writeFile(join(cwd, '.pi', 'extensions', 'dialog.js'), DIALOG_EXTENSION);
    await mkdir(join(root.path, 'home'), { recursive: true });
    ({ h: pi, rec } = make());
    await pi.start();
  });

  afterAll(async () => {
    await Promise.all(harnesses.map((h) => h.stop().catch(() => {})));
    await fake?.close();
    await mcp?.close();
    await root?.remove();
  });

  it("completes a turn with the model's text, the note in its system prompt", async () => {
    expect(pi.state).toBe('idle');
    const r = await pi.send('t1', 'hello pi');
    expect(r).toMatchObject({ status: 'completed' });
    expect(r.text).toMatch(/^FAKE_REPLY\(\d+\): hello pi$/);
    expect(pi.state).toBe('idle');
    expect(rec.seen.texts).toContain(r.text);
    const last = fake.requests.at(-1)!;
    expect(last).toMatchObject({ api: 'openai', stream: true, model: 'fake-model' });
    expect(promptsOf(last.body)).toContain('NOTE-MARKER-7f3a');
    expect(last.tools).toEqual(
      expect.arrayContaining(['mcp__shrooms__task_update', 'mcp__shrooms__ask_agent', 'mcp__shrooms__list_agents']),
    );
  });

  it('sends a tool call through the extension to the MCP server, with the task id from the header', async () => {
    const r = await pi.send(
      't2',
      `${HEADER}\n${useTool('task_update', { task: '$TASK', status: 'blocked', text: 'which branch?' })}\nFinish with task_update.`,
    );
    expect(r.status).toBe('completed');
    expect(r.text).toContain('tool returned: task harness-test:m-7 is now blocked');
    expect(mcp.calls).toContainEqual({ tool: 'task_update', args: { task: 'harness-test:m-7', status: 'blocked', text: 'which branch?' } });
  });

  it('answers an extension dialog at once instead of leaving the run hanging', async () => {
    const r = await pi.send('t3', useTool('ask_owner'));
    expect(r.status).toBe('completed');
    expect(r.text).toContain('confirmed=false');
  });

  it('cancels a turn mid-stream, and the next turn works', async () => {
    const seenBefore = fake.requests.length;
    const turn = pi.send('t4', 'please answer SLOW');
    await fake.waitForRequest((q) => q.n > seenBefore && q.conversation.prompt === 'please answer SLOW');
    expect(pi.state).toBe('busy');
    await pi.cancel();
    expect(await turn).toMatchObject({ status: 'cancelled' });
    expect(pi.state).toBe('idle');
    const r = await pi.send('t5', 'after the cancel');
    expect(r.text).toMatch(/^FAKE_REPLY\(\d+\): after the cancel$/);
  });

  it('falls back to a kill and a resume when the abort does not end the run in time', async () => {
    const { h, rec: r } = make(join(root.path, 'state-grace'), 1);
    await h.start();
    expect((await h.send('g1', 'remember me')).status).toBe('completed');
    const sessionId = h.sessionId;
    const pid = h.pid;
    const seenBefore = fake.requests.length;
    const turn = h.send('g2', 'a SLOW one');
    await fake.waitForRequest((q) => q.n > seenBefore && q.conversation.prompt === 'a SLOW one');
    await h.cancel();
    expect(await turn).toMatchObject({ status: 'cancelled' });
    expect(h.pid).not.toBe(pid);
    expect(h.sessionId).toBe(sessionId);
    expect(r.seen.exits).toEqual([]);
    const next = await h.send('g3', 'still here');
    expect(next.text).toMatch(/^FAKE_REPLY\(\d+\): still here$/);
    expect(promptsOf(fake.requests.at(-1)!.body)).toContain('remember me');
    await h.stop();
  });

  it('fails a turn on an API error, with the error', async () => {
    const r = await pi.send('t6', 'this will FAIL');
    expect(r.status).toBe('failed');
    expect(r.error).toContain('500');
    expect((await pi.send('t7', 'fine again')).status).toBe('completed');
  });

  it('runs a chain: A asks B through ask_agent, B finishes its task, A finishes quoting B', async () => {
    ({ h: second } = make(join(root.path, 'state-b')));
    await second.start();
    const forB = useTool('task_update', { task: '$TASK', status: 'done', text: 'B did the work' });
    const forA = chain(
      useTool('ask_agent', { to: 'testbox/b', text: nest(forB) }),
      useTool('task_update', { task: '$TASK', status: 'done', text: 'A got: $RESULT' }),
    );
    const r = await pi.send('t8', `${HEADER}\n${forA}`);
    expect(r.status).toBe('completed');
    expect(mcp.calls).toContainEqual({ tool: 'task_update', args: { task: 'b:m-8', status: 'done', text: 'B did the work' } });
    const a = mcp.calls.find((c) => c.tool === 'task_update' && c.args.task === 'harness-test:m-7' && c.args.status === 'done');
    expect(a?.args.text).toContain('A got: completed: FAKE_REPLY');
    expect(a?.args.text).toContain('task b:m-8 is now done');
    await second.stop();
  });

  it('rejects the turn when the process is killed, then a new adapter resumes the same session', async () => {
    const sessionId = pi.sessionId;
    expect(sessionId).toBeTruthy();
    const seenBefore = fake.requests.length;
    const turn = pi.send('t9', 'a SLOW one to be killed');
    await fake.waitForRequest((q) => q.n > seenBefore && q.conversation.prompt.includes('to be killed'));
    process.kill(pi.pid!, 'SIGKILL');
    await expect(turn).rejects.toThrow(/pi exited/);
    await rec.until((s) => s.exits.length === 1);
    expect(pi.state).toBe('dead');

    const { h: again } = make();
    await again.start();
    expect(again.sessionId).toBe(sessionId);
    const r = await again.send('t10', 'after the restart');
    expect(r).toMatchObject({ status: 'completed' });
    expect(promptsOf(fake.requests.at(-1)!.body)).toContain('hello pi');
    pi = again;
  });
});
