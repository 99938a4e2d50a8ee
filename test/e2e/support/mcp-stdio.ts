/** An MCP SDK client on `shrooms-agent mcp` over stdio, as Claude Code starts it, with `env` over this process's. */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, REPO_ROOT } from '@shrooms/testing';

export async function mcpOverStdio(env: Record<string, string>): Promise<Client> {
  const all = Object.fromEntries(Object.entries({ ...process.env, ...env }).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--conditions=development', '--import', 'tsx', join(REPO_ROOT, CLI), 'mcp'],
      env: all,
      cwd: REPO_ROOT,
      stderr: 'pipe',
    }),
  );
  return client;
}
