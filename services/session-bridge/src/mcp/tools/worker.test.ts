import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Part } from '@shrooms/protocol';
import { tempDir, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useMcpInMemory } from '../../testing/mcp.js';

// <temp>/session is the session's folder (the bridge's BRIDGE_CWD), never this process's cwd.
let temp: TempDir;
let session: string;
let secret: string;
beforeAll(async () => {
  temp = await tempDir('mcp-worker');
  const root = await realpath(temp.path);
  session = join(root, 'session');
  secret = join(root, 'secret.env');
  await mkdir(session);
  await writeFile(join(session, 'report.md'), 'the report');
  await writeFile(secret, 'NATS_PASS=hunter2');
  await symlink(secret, join(session, 'env'));
});
afterAll(async () => {
  await temp?.remove();
});

const connectTools = useMcpInMemory();

/** The tools as a bridge hosts them for session box/alpha, its updates caught in `updates`. */
function connect(updates: Part[][]): Promise<Client> {
  return connectTools({
    machine: 'box',
    session: 'alpha',
    gatewayUrl: 'http://127.0.0.1:1',
    env: { NATS_URL: 'nats://127.0.0.1:1' },
    cwd: session,
    worker: {
      update: async (taskId, _status, _text, parts) => {
        updates.push(parts ?? []);
        return { id: taskId, contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } as never;
      },
    },
  });
}

type Result = { isError?: boolean; content: { text: string }[]; _meta?: Record<string, { key: string }> };
const done = (c: Client, files: string[]) =>
  c.callTool({ name: 'task_update', arguments: { task: 'alpha:m-1', status: 'done', text: 'ok', files } }) as Promise<Result>;

describe('task_update files', () => {
  it("returns a relative path from the session's folder the bridge gave, not the process's cwd", async () => {
    const updates: Part[][] = [];
    const r = await done(await connect(updates), ['report.md']);
    expect(r.isError, r.content[0]?.text).toBeFalsy();
    expect(updates).toHaveLength(1);
    expect(updates[0]?.[0]?.filename).toBe('report.md');
    expect(Buffer.from(updates[0]?.[0]?.raw ?? '', 'base64').toString()).toBe('the report');
  });

  it("refuses a file outside the session's folder, directly or through a link, and updates nothing", async () => {
    const updates: Part[][] = [];
    const client = await connect(updates);
    for (const f of [secret, 'env', '../secret.env']) {
      const r = await done(client, [f]);
      expect(r.isError).toBe(true);
      expect(r._meta?.['shrooms/error']?.key).toBe('INVALID_PARAMS');
      expect(r.content[0]?.text).toContain(`INVALID_PARAMS: ${f} is outside the session's folder ${session}`);
    }
    expect(updates).toEqual([]);
  });
});
