/**
 * The Claude Code adapter against the real `claude` CLI (the pinned dev dependency), the fake model
 * server and a real MCP server over streamable HTTP — no real model, no network beyond loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chain, eventually, startFakeModel, tempDir, useTool, type FakeModel, type TempDir } from '@shrooms/testing';
import { harnessFactory, type Harness, type HarnessFactory } from '@shrooms/session-bridge';
import { startTestMcpServer, type TestMcpServer } from './mcp-tools.js';
import { harnessOptions, promptsOf, recorder, type Recorder } from './helpers.js';

type ClaudeHarness = Harness & { readonly pid?: number; readonly sessionId?: string };

const HEADER = '[shrooms task harness-test:m-42 from laptop (laptop/webapp)]';

describe('the Claude Code harness', () => {
  let fake: FakeModel;
  let mcp: TestMcpServer;
  let create: HarnessFactory;
  let stateDir: TempDir;
  let cwd: TempDir;
  let claude: ClaudeHarness;
  let rec: Recorder;
  const harnesses: Harness[] = [];

  function make(opts: { autoApprove?: boolean; stateDir?: string; cancelGraceMs?: number } = {}): { h: ClaudeHarness; rec: Recorder } {
    const r = recorder();
    const env = { SHROOMS_MODEL_BASE_URL: fake.url, SHROOMS_MODEL_API_KEY: 'sk-fake', CLAUDE_CODE_MAX_RETRIES: '0' };
    const h = create(
      harnessOptions({
        stateDir: opts.stateDir ?? stateDir.path,
        cwd: cwd.path,
        mcpUrl: mcp.url,
        env,
        events: r.events,
        autoApprove: opts.autoApprove,
        cancelGraceMs: opts.cancelGraceMs,
      }),
    ) as ClaudeHarness;
    harnesses.push(h);
    return { h, rec: r };
  }

  beforeAll(async () => {
    fake = await startFakeModel({ slow: { chunks: 40, delayMs: 500 } });
    mcp = await startTestMcpServer();
    create = await harnessFactory('claude');
    stateDir = await tempDir('shrooms-claude-state');
    cwd = await tempDir('shrooms-claude-cwd');
    ({ h: claude, rec } = make());
    await claude.start();
  });

  afterAll(async () => {
    await Promise.all(harnesses.map((h) => h.stop().catch(() => {})));
    await fake?.close();
    await mcp?.close();
    await stateDir?.remove();
    await cwd?.remove();
  });

  it("completes a turn with the model's text, the note in its system prompt", async () => {
    expect(claude.state).toBe('idle');
    const r = await claude.send('t1', 'hello claude');
    expect(r).toMatchObject({ status: 'completed' });
    expect(r.text).toMatch(/^FAKE_REPLY\(\d+\): hello claude$/);
    expect(claude.state).toBe('idle');
    expect(rec.seen.texts).toContain(r.text);
    expect(JSON.stringify(fake.requests.at(-1)!.body.system)).toContain('NOTE-MARKER-7f3a');
  });

  it('sends a read-only tool call to the MCP server without asking, with the task id from the header', async () => {
    const r = await claude.send('t2', `${HEADER}\n${useTool('task_status', { task: '$TASK' })}\nFinish with task_update.`);
    expect(r.status).toBe('completed');
    expect(r.text).toContain('tool returned: harness-test:m-42: TASK_STATE_WORKING');
    expect(mcp.calls).toContainEqual({ tool: 'task_status', args: { task: 'harness-test:m-42' } });
    expect(rec.seen.permissions).toEqual([]);
  });

  it("runs task_update without asking: it is the session's own bookkeeping", async () => {
    const r = await claude.send('t3a', `${HEADER}\n${useTool('task_update', { task: '$TASK', status: 'done', text: 'all good' })}`);
    expect(r).toMatchObject({ status: 'completed' });
    expect(r.text).toContain('task harness-test:m-42 is now done');
    expect(mcp.calls).toContainEqual({ tool: 'task_update', args: { task: 'harness-test:m-42', status: 'done', text: 'all good' } });
    expect(rec.seen.permissions).toEqual([]);
  });

  it('relays a permission prompt for ask_agent; allowing it lets the call run', async () => {
    const turn = claude.send('t3', `${HEADER}\n${useTool('ask_agent', { to: 'laptop/webapp', text: 'run the tests' })}`);
    await rec.until((s) => s.permissions.length === 1);
    const p = rec.seen.permissions[0]!;
    expect(p).toMatchObject({ tool: 'mcp__shrooms__ask_agent', input: { to: 'laptop/webapp', text: 'run the tests' } });
    expect(claude.state).toBe('waiting');
    expect(mcp.calls.some((c) => c.tool === 'ask_agent')).toBe(false);
    claude.answerPermission(p.id, true);
    const r = await turn;
    expect(r).toMatchObject({ status: 'completed' });
    expect(mcp.calls.some((c) => c.tool === 'ask_agent' && (c.args as { to: string }).to === 'laptop/webapp')).toBe(true);
    expect(rec.seen.states.slice(-3)).toEqual(['waiting', 'busy', 'idle']);
  });

  it('relays a permission prompt; denying it refuses the tool', async () => {
    const before = mcp.calls.length;
    const turn = claude.send('t4', useTool('echo', { text: 'not allowed' }));
    await rec.until((s) => s.permissions.length === 2);
    claude.answerPermission(rec.seen.permissions[1]!.id, false);
    const r = await turn;
    expect(r.status).toBe('completed');
    expect(r.text).toContain('did not allow this tool call');
    expect(mcp.calls.length).toBe(before);
  });

  it('withdraws a waiting permission prompt when the turn is cancelled', async () => {
    const before = mcp.calls.length;
    const turn = claude.send('t4b', useTool('echo', { text: 'cancel me while you ask' }));
    await rec.until((s) => s.permissions.length === 3);
    expect(claude.state).toBe('waiting');
    await claude.cancel();
    expect(await turn).toMatchObject({ status: 'cancelled' });
    expect(claude.state).toBe('idle');
    claude.answerPermission(rec.seen.permissions[2]!.id, true); // too late: ignored
    expect(mcp.calls.length).toBe(before);
  });

  it('cancels a turn mid-stream, and the next turn works', async () => {
    const seenBefore = fake.requests.length;
    const turn = claude.send('t5', 'please answer SLOW');
    await fake.waitForRequest((q) => q.n > seenBefore && q.conversation.prompt === 'please answer SLOW');
    expect(claude.state).toBe('busy');
    await claude.cancel();
    expect(await turn).toMatchObject({ status: 'cancelled' });
    expect(claude.state).toBe('idle');
    const r = await claude.send('t6', 'after the cancel');
    expect(r).toMatchObject({ status: 'completed' });
    expect(r.text).toMatch(/FAKE_REPLY\(\d+\): after the cancel$/);
  });

  it('fails a turn on an API error, with the error', async () => {
    const r = await claude.send('t7', 'this will FAIL');
    expect(r.status).toBe('failed');
    expect(r.error).toContain('500');
    expect((await claude.send('t8', 'fine again')).status).toBe('completed');
  });

  it('rejects the turn when the process is killed, then a new adapter resumes the same session', async () => {
    const sessionId = claude.sessionId;
    expect(sessionId).toBeTruthy();
    const seenBefore = fake.requests.length;
    const turn = claude.send('t9', 'a SLOW one to be killed');
    await fake.waitForRequest((q) => q.n > seenBefore && q.conversation.prompt.includes('to be killed'));
    process.kill(claude.pid!, 'SIGKILL');
    await expect(turn).rejects.toThrow(/claude exited/);
    await rec.until((s) => s.exits.length === 1);
    expect(claude.state).toBe('dead');

    const { h: again } = make();
    await again.start();
    expect(again.sessionId).toBe(sessionId);
    const r = await again.send('t10', 'after the restart');
    expect(r).toMatchObject({ status: 'completed' });
    expect(promptsOf(fake.requests.at(-1)!.body)).toContain('hello claude');
    claude = again;
  });

  it('falls back to a kill and a resume when the interrupt does not end the turn in time', async () => {
    const own = await tempDir('shrooms-claude-grace');
    const { h, rec: r } = make({ stateDir: own.path, cancelGraceMs: 1 });
    try {
      await h.start();
      expect((await h.send('g1', 'remember me')).status).toBe('completed');
      const sessionId = h.sessionId;
      const pid = h.pid;
      // claude writes its transcript after the turn's answer; a claude stopped and killed before
      // that has nothing to resume, and the harness rightly starts a new conversation (seen on a
      // loaded machine). The resume this test is about needs the transcript written first.
      await eventually(() => transcriptHas(join(own.path, 'claude-home', '.claude'), sessionId!, 'remember me'), 30_000);
      const seenBefore = fake.requests.length;
      const turn = h.send('g2', 'a SLOW one');
      await fake.waitForRequest((q) => q.n > seenBefore && q.conversation.prompt === 'a SLOW one');
      // A claude that cannot answer the interrupt: stopped (SIGSTOP), it stays so past any grace.
      // (A 1 ms grace alone raced claude's own answer: on a busy machine it sometimes came first.)
      process.kill(pid!, 'SIGSTOP');
      await h.cancel();
      expect(await turn).toMatchObject({ status: 'cancelled' });
      expect(h.pid).not.toBe(pid);
      expect(h.sessionId).toBe(sessionId);
      expect(r.seen.exits).toEqual([]);
      const next = await h.send('g3', 'still here');
      expect(next.text).toMatch(/FAKE_REPLY\(\d+\): still here$/);
      expect(promptsOf(fake.requests.at(-1)!.body)).toContain('remember me');
    } finally {
      // Stopped before its folder goes, also when an expectation failed: a claude still writing
      // there made the removal fail (ENOTEMPTY), and that error hid the one that mattered. A stop
      // that fails still removes it (remove() also retries a folder still being written).
      await h.stop().finally(() => own.remove());
    }
  });

  it('with autoApprove runs tools without asking, and counts a background command until it ends', async () => {
    const own = await tempDir('shrooms-claude-auto');
    const { h, rec: r } = make({ autoApprove: true, stateDir: own.path });
    try {
      await h.start();
      const bg = useTool('Bash', { command: 'sleep 2', run_in_background: true, description: 'short background sleep' });
      const done = await h.send(
        'a1',
        `${HEADER}\n${chain(bg, useTool('task_update', { task: '$TASK', status: 'done', text: 'started it' }))}`,
      );
      expect(done.status).toBe('completed');
      expect(r.seen.permissions).toEqual([]);
      expect(mcp.calls).toContainEqual({ tool: 'task_update', args: { task: 'harness-test:m-42', status: 'done', text: 'started it' } });
      expect(r.seen.background).toContain(1);
      await r.until((s) => s.background.at(-1) === 0);
      // Claude Code then runs a turn of its own to tell the model; ours still gets its own result.
      await r.until((s) => s.texts.some((t) => t.includes('task-notification')));
      const next = await h.send('a2', 'and now this');
      expect(next.text).toMatch(/FAKE_REPLY\(\d+\): and now this$/);
    } finally {
      await h.stop().finally(() => own.remove());
    }
  });
});

/** Whether claude's transcript of `sessionId` (in any project folder of `configDir`) holds `text`. */
async function transcriptHas(configDir: string, sessionId: string, text: string): Promise<boolean> {
  const projects = join(configDir, 'projects');
  for (const d of await readdir(projects).catch(() => [] as string[])) {
    const body = await readFile(join(projects, d, `${sessionId}.jsonl`), 'utf8').catch(() => '');
    if (body.includes(text)) return true;
  }
  return false;
}
