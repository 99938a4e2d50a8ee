/**
 * The MCP SDK's own client against `shrooms-agent mcp` (stdio, as Claude Code starts it), pointed
 * at the gateway `up` printed: the tools a person's session gets, without any of our test helpers.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, REPO_ROOT } from '@shrooms/testing';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';

const machine = inject('machine');
let client: Client;

beforeAll(async () => {
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === 'string'));
  client = new Client({ name: 'interop', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--conditions=development', '--import', 'tsx', join(REPO_ROOT, CLI), 'mcp'],
      env: { ...env, SHROOMS_GATEWAY_URL: inject('gatewayUrl'), SHROOMS_MACHINE: machine, SHROOMS_AGENT_SESSION: 'interop-user' },
      cwd: REPO_ROOT,
      stderr: 'pipe',
    }),
  );
});
afterAll(async () => {
  await client?.close();
});

type Result = { isError?: boolean; structuredContent?: any; content: { type: string; text: string }[] };

it('lists the tools and the demo session among the agents', async () => {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['list_agents', 'ask_agent', 'task_status', 'task_update', 'task_ack']));
  const r = (await client.callTool({ name: 'list_agents', arguments: {} })) as Result;
  expect(r.isError).toBeFalsy();
  expect(r.structuredContent.agents.map((a: { name: string }) => a.name)).toContain(`${machine}/demo`);
});

it('asks the demo session and waits for its answer', async () => {
  const r = (await client.callTool({ name: 'ask_agent', arguments: { to: 'demo', text: 'hello over MCP' } })) as Result;
  expect(r.isError).toBeFalsy();
  expect(r.structuredContent).toMatchObject({ agent: `${machine}/demo`, status: 'completed', reply: 'hello over MCP', finished: true });
});
