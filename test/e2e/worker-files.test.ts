/**
 * The files a worker returns with `task_update`, through the MCP server its bridge hosts (the tool
 * runs without a prompt, in the bridge's process): read from the session's folder (`--cwd`), never
 * from the bridge's own working directory, and nothing outside that folder is sent.
 */
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { eventually, freePort, tempDir, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClientMesh, type ClientMesh } from './support/client-mesh.js';

const M = 'filebox';
let mesh: ClientMesh;
let temp: TempDir;
/** The session's folder; the bridge itself runs in the repository's root. */
let folder: string;
let secret: string;
let client: Client;
/** A task of the session, open while its echo worker sleeps (10 minutes). */
let task: string;

beforeAll(async () => {
  temp = await tempDir('worker-files');
  const root = await realpath(temp.path);
  folder = join(root, 'session');
  secret = join(root, 'secret.env');
  await mkdir(folder);
  await writeFile(join(folder, 'worker-files-report.md'), '# the report\n');
  await writeFile(secret, 'NATS_PASS=hunter2\n');
  await symlink(secret, join(folder, 'env-link'));
  mesh = await startClientMesh({ machine: M, sessions: [] });
  const port = await freePort();
  const bridge = mesh.spawnCli(['bridge', '--harness', 'echo', '--session', 'files', '--cwd', folder], {
    BRIDGE_STATE_DIR: join(root, 'state'),
    BRIDGE_MCP_PORT: String(port),
    ECHO_DELAY_MS: '600000',
  });
  await bridge.waitFor(/bridge ready/, 120_000);
  client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  const sent = await rpc('SendMessage', {
    message: { messageId: 'files-1', role: 'ROLE_USER', parts: [{ text: 'write the report' }] },
    configuration: { returnImmediately: true },
  });
  task = sent.result.task.id;
  await eventually(async () => ((await getTask()).status.state === 'TASK_STATE_WORKING' ? true : undefined), 30_000);
});
afterAll(async () => {
  try {
    await client?.close();
    await mesh?.stop();
  } finally {
    await temp?.remove();
  }
});

async function rpc(method: string, params: unknown): Promise<any> {
  const res = await fetch(`${mesh.gatewayUrl}/a2a/files`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return res.json();
}
const getTask = async () => (await rpc('GetTask', { id: task })).result;

type Result = { isError?: boolean; structuredContent?: any; content: { text: string }[]; _meta?: any };
const update = async (files: string[]) =>
  (await client.callTool({ name: 'task_update', arguments: { task, status: 'done', text: 'report written', files } })) as Result;

describe("task_update's files through the bridge's own MCP server", () => {
  it("refuses a file outside the session's folder — absolute, ../, or a link — and the task stays open", async () => {
    for (const f of [secret, '../secret.env', 'env-link']) {
      const r = await update([f]);
      expect(r.isError, JSON.stringify(r)).toBe(true);
      expect(r._meta['shrooms/error']).toMatchObject({ key: 'INVALID_PARAMS', code: -32602, retryable: false });
      expect(r.content[0]!.text).toContain(`INVALID_PARAMS: ${f} is outside the session's folder ${folder}`);
    }
    const t = await getTask();
    expect(t.status.state).toBe('TASK_STATE_WORKING');
    expect(JSON.stringify(t)).not.toContain(Buffer.from('NATS_PASS=hunter2\n').toString('base64'));
  });

  it("returns a relative path from the session's folder, though the bridge runs elsewhere", async () => {
    const r = await update(['worker-files-report.md']);
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ status: 'completed', reply: 'report written' });
    const parts: { raw?: string; filename?: string }[] = (await getTask()).artifacts.flatMap((a: { parts: unknown[] }) => a.parts);
    const file = parts.find((p) => p.filename === 'worker-files-report.md');
    expect(Buffer.from(file?.raw ?? '', 'base64').toString()).toBe('# the report\n');
  });
});
