/**
 * The MCP server `shrooms` driven by the MCP SDK's own client, over stdio (`shrooms-agent mcp` as
 * Claude Code starts it) and over streamable HTTP (`shrooms-agent mcp --http 0`, the form the
 * bridge hosts for pi), against a mesh of real processes: list, ask with wait and progress, ask
 * without wait then task_status, the worker's task_update and its refusal, ack, parent and trace.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { REPO_ROOT } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startClientMesh, startSleepingSession, type ClientMesh } from './support/client-mesh.js';

const M = 'mcpbox';
let mesh: ClientMesh;

beforeAll(async () => {
  mesh = await startClientMesh({ machine: M, sessions: [{ name: 'demo' }, { name: 'slow', env: { ECHO_DELAY_MS: '600000' } }] });
  await startSleepingSession(mesh, 'sleepy');
});
afterAll(async () => {
  await mesh?.stop();
});

/** The tools as session `slow` sees them; progress every 200 ms so a short wait shows several. */
const toolEnv = (extra: Record<string, string> = {}) => ({
  ...mesh.env,
  SHROOMS_AGENT_SESSION: 'slow',
  SHROOMS_ASK_PROGRESS_MS: '200',
  ...extra,
});

function stdioTransport(extra: Record<string, string> = {}): Transport {
  const env = Object.fromEntries(
    Object.entries({ ...process.env, ...toolEnv(extra) }).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
  return new StdioClientTransport({
    command: process.execPath,
    args: ['--conditions=development', '--import', 'tsx', join(REPO_ROOT, CLI), 'mcp'],
    env,
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
}

async function httpTransport(): Promise<Transport> {
  const p = mesh.spawnCli(['mcp', '--http', '0'], toolEnv());
  const line = await p.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+\/mcp/, 60_000);
  return new StreamableHTTPClientTransport(new URL(line.replace('listening on ', '')));
}

async function connect(t: Transport): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(t);
  return client;
}

/** A plain JSON-RPC call, as curl or another A2A client would make it. */
async function rpc(session: string, method: string, params: unknown): Promise<any> {
  const res = await fetch(`${mesh.gatewayUrl}/a2a/${session}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return res.json();
}

/** A task for `slow` asked by someone else; it stays open (the echo worker waits 10 minutes). */
async function taskForSlow(text: string): Promise<string> {
  const r = await rpc('slow', 'SendMessage', {
    message: { messageId: `m-${Math.random().toString(16).slice(2)}`, role: 'ROLE_USER', parts: [{ text }] },
    configuration: { returnImmediately: true },
  });
  return `${M}/${r.result.task.id}`;
}

type Result = { isError?: boolean; structuredContent?: any; content: { type: string; text: string }[]; _meta?: any };
const call = async (c: Client, name: string, args: Record<string, unknown>, opts?: Parameters<Client['callTool']>[2]) =>
  (await c.callTool({ name, arguments: args }, undefined, opts)) as Result;

describe.each([
  ['stdio', async () => stdioTransport()],
  ['streamable HTTP', httpTransport],
] as const)('over %s', (_, transport) => {
  let client: Client;
  let answered: string;
  beforeAll(async () => {
    client = await connect(await transport());
  });
  afterAll(async () => {
    await client?.close();
  });

  it('lists the agents on the mesh and says who you are', async () => {
    const r = await call(client, 'list_agents', {});
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent.you).toBe(`${M}/slow`);
    expect(r.structuredContent.agents.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining([`${M}/demo`, `${M}/slow`]));
    expect(r.content[0]!.text).toMatch(new RegExp(`agents on the mesh; you are ${M}/slow\\.[\\s\\S]*${M}/demo — echo, `));
  });

  it('asks another agent and waits for its answer', async () => {
    const r = await call(client, 'ask_agent', { to: 'demo', text: 'hello from mcp' });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      agent: `${M}/demo`,
      status: 'completed',
      reply: 'hello from mcp',
      waitedOut: false,
      finished: true,
    });
    expect(r.structuredContent.task).toMatch(new RegExp(`^${M}/demo:mcp-`));
    expect(r.content[0]!.text).toBe(`Task ${r.structuredContent.task} is completed.\nReply:\nhello from mcp`);
    answered = r.structuredContent.task;
  });

  it('sends progress while it waits, then returns the task as it stands for task_status to follow', async () => {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const r = await call(
      client,
      'ask_agent',
      { to: 'sleepy', text: 'are you awake?', wait_seconds: 2 },
      { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
    );
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ agent: `${M}/sleepy`, status: 'queued', waitedOut: true, finished: false });
    expect(r.content[0]!.text).toMatch(
      new RegExp(
        `is queued\\. Now: no bridge serves ${M}/sleepy: the task waits in its queue until one starts\\. The wait ended before it finished; follow it with task_status, task "`,
      ),
    );
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]!.message).toMatch(new RegExp(`^${M}/sleepy:mcp-\\S+ is queued — waited \\d+ s of 2 s$`));
    expect(progress.at(-1)!.message).toMatch(
      new RegExp(
        `^${M}/sleepy:mcp-\\S+ is queued \\(no bridge serves ${M}/sleepy: the task waits in its queue until one starts\\) — waited`,
      ),
    );
    expect(progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress)).toBe(true);
    expect(progress[0]!.total).toBe(2);

    const s = await call(client, 'task_status', { task: r.structuredContent.task });
    expect(s.structuredContent).toMatchObject({ task: r.structuredContent.task, status: 'queued', waitedOut: false });
  });

  it('asks without waiting, then follows the task with task_status', async () => {
    const r = await call(client, 'ask_agent', { to: `${M}/demo`, text: 'no rush', wait: false });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent.waitedOut).toBe(false);
    const s = await call(client, 'task_status', { task: r.structuredContent.task, wait_seconds: 60 });
    expect(s.structuredContent).toMatchObject({ status: 'completed', reply: 'no rush' });
  });

  it('lets the worker finish its own task with task_update', async () => {
    const task = await taskForSlow('run the slow suite');
    const r = await call(client, 'task_update', { task, status: 'done', text: 'suite passed' });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ task, status: 'completed', reply: 'suite passed' });
    const s = await call(client, 'task_status', { task });
    expect(s.content[0]!.text).toBe(`Task ${task} is completed.\nReply:\nsuite passed`);
  });

  it('blocks with task_update, and the asker answers with ask_agent task', async () => {
    const task = await taskForSlow('deploy');
    const b = await call(client, 'task_update', { task: task.slice(M.length + 1), status: 'blocked', text: 'which environment?' });
    expect(b.structuredContent).toMatchObject({ status: 'input-required', needsInput: true, reply: 'which environment?' });
    const a = await call(client, 'ask_agent', { task, text: 'staging', wait: false });
    expect(a.isError).toBeFalsy();
    expect(a.structuredContent.task).toBe(task);
    expect(['queued', 'submitted', 'working']).toContain(a.structuredContent.status);
  });

  it("refuses task_update for another session's task", async () => {
    const r = await call(client, 'task_update', { task: answered, status: 'failed', text: 'not mine' });
    expect(r.isError).toBe(true);
    expect(r._meta['shrooms/error']).toMatchObject({ key: 'UPDATE_FORBIDDEN', code: -32060, retryable: false });
    expect(r.content[0]!.text).toMatch(
      new RegExp(`^UPDATE_FORBIDDEN: ${answered} is a task of ${M}/demo; ${M}/slow may only update its own tasks`),
    );
  });

  it('acknowledges an answer with task_ack', async () => {
    const r = await call(client, 'task_ack', { task: answered });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ task: answered, acknowledged: true, status: 'completed' });
  });
});

describe('across the mesh', () => {
  it('the gateway itself refuses an update claimed by another session', async () => {
    const task = await taskForSlow('guarded');
    const r = await rpc('slow', 'UpdateTask', {
      id: task.slice(M.length + 1),
      status: 'done',
      text: 'forged',
      metadata: { 'shrooms/from': `${M}/demo` },
    });
    expect(r.error.code).toBe(-32060);
  });

  it('an ask from inside a task carries the parent task and the trace', async () => {
    const parent = await taskForSlow('the parent work');
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const client = await connect(stdioTransport({ SHROOMS_TASK_ID: parent.slice(M.length + 1), TRACEPARENT: traceparent }));
    try {
      const r = await call(client, 'ask_agent', { to: 'demo', text: 'sub-question' });
      expect(r.structuredContent.status).toBe('completed');
      const got = await rpc('demo', 'GetTask', { id: r.structuredContent.task.slice(M.length + 1) });
      expect(got.result.metadata).toMatchObject({
        'shrooms/parent': parent,
        'shrooms/depth': 1,
        'shrooms/traceparent': traceparent,
        'shrooms/from': `${M}/slow`,
      });
    } finally {
      await client.close();
    }
  });

  it("keeps every wait within SHROOMS_ASK_MAX_WAIT_SECONDS, below an agent's own tool timeout", async () => {
    const client = await connect(stdioTransport({ SHROOMS_ASK_MAX_WAIT_SECONDS: '1' }));
    try {
      // The default wait, and a longer one asked for: each ends after a second, the task as it stands.
      for (const args of [{}, { wait_seconds: 600 }]) {
        const progress: { total?: number }[] = [];
        const r = await call(
          client,
          'ask_agent',
          { to: 'sleepy', text: 'a quick look', ...args },
          { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
        );
        expect(r.structuredContent).toMatchObject({ agent: `${M}/sleepy`, waitedOut: true, finished: false });
        expect(progress.map((p) => p.total)).toEqual(progress.map(() => 1));
        const s = await call(client, 'task_status', { task: r.structuredContent.task, wait_seconds: 600 });
        expect(s.structuredContent).toMatchObject({ waitedOut: true, finished: false });
      }
    } finally {
      await client.close();
    }
  });

  it('schedule tools say the scheduler is not running when none runs', async () => {
    const client = await connect(stdioTransport());
    try {
      const r = await call(client, 'list_schedules', {});
      expect(r.isError).toBe(true);
      expect(r._meta['shrooms/error'].key).toBe('SCHEDULER_UNAVAILABLE');
      expect(r.content[0]!.text).toMatch(/^SCHEDULER_UNAVAILABLE: the scheduler is not running/);
    } finally {
      await client.close();
    }
  });
});
