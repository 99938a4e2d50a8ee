/**
 * The files a worker returns with `task_update`, through the MCP server its bridge hosts (the tool
 * runs without a prompt, in the bridge's process): read from the session's folder (`--cwd`), never
 * from the bridge's own working directory, and nothing outside that folder is sent; and the asking
 * session's task_status (its tools in the test's process, the mesh in its own) writes the returned
 * file into the asker's folder.
 */
import { mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '@shrooms/session-bridge';
import { eventually, freePort, tempDir, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClientMesh, type ClientMesh } from './support/client-mesh.js';

const M = 'filebox';
let mesh: ClientMesh;
let temp: TempDir;
/** The session's folder; the bridge itself runs in the repository's root. */
let folder: string;
/** The folder of a session that asks about the task (its tools run in the test's process). */
let askerFolder: string;
let secret: string;
let client: Client;
/** A task of the session, open while its echo worker sleeps (10 minutes). */
let task: string;

beforeAll(async () => {
  temp = await tempDir('worker-files');
  const root = await realpath(temp.path);
  folder = join(root, 'session');
  askerFolder = join(root, 'asker');
  await mkdir(askerFolder);
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

describe('what the worker returned, as the asking session gets it', () => {
  it("writes the returned file into the asker's folder and names it in task_status", async () => {
    const { server, context } = createMcpServer({ machine: M, session: 'asker', gatewayUrl: mesh.gatewayUrl, cwd: askerFolder });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const asker = new Client({ name: 'asker', version: '1.0.0' });
    await Promise.all([server.connect(a), asker.connect(b)]);
    try {
      const r = (await asker.callTool({ name: 'task_status', arguments: { task: `${M}/${task}` } })) as Result;
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      const rel = join('.shrooms', 'received', `${M}_files_files-1`);
      const line = `- file ${join(rel, 'worker-files-report.md')} (13 bytes)`;
      expect(r.content[0]!.text.split('\n').slice(-2)).toEqual([
        `Returned with it (files are under ${rel}/ in your working directory):`,
        line,
      ]);
      expect(r.structuredContent).toMatchObject({ status: 'completed', reply: 'report written', returned: [line] });
      expect(await readFile(join(askerFolder, rel, 'worker-files-report.md'), 'utf8')).toBe('# the report\n');
    } finally {
      await asker.close();
      await server.close();
      await context.client.close();
    }
  });
});
