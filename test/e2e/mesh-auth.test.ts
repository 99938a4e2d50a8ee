/**
 * The mesh is the authentication (spec §6), end to end: devices named from their source address
 * (clients bound to 127.0.0.2, 127.0.0.3 …), the loop guard exact across two gateways and two guard
 * replicas, chain depth and cycles refused, and a held task released by its owner.
 *
 * Over 300 lines: one mesh with the peers file, two gateways and two guard replicas for the file;
 * every case below needs that same set-up.
 */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpOverStdio } from './support/mcp-stdio.js';
import { CLI, eventually, freePort, rpc, runTs, startMesh, tempDir, type Mesh, type ServiceProcess, type TempDir } from '@shrooms/testing';

let mesh: Mesh;
let second: ServiceProcess;
let secondUrl: string;
/** The peers file's folder. */
let peersDir: TempDir | undefined;

/** A JSON-RPC request from `localAddress`; `answer` reads its response (`req` is there to end it early). */
function postFrom<T>(
  localAddress: string,
  url: string,
  call: { method: string; params: unknown; headers?: Record<string, string> },
  answer: (res: IncomingMessage, req: ClientRequest, resolve: (v: T) => void) => void,
): Promise<T> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...call.headers },
      },
      (res) => answer(res, req, resolve),
    );
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: call.method, params: call.params }));
  });
}

function rpcFrom(localAddress: string, url: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<any> {
  return postFrom(localAddress, url, { method, params, headers }, (res, _req, resolve) => {
    let data = '';
    res.on('data', (d) => (data += d));
    res.on('end', () => resolve(JSON.parse(data)));
  });
}

/**
 * A JSON-RPC stream opened from `localAddress`: its status and first chunk (an event, or the JSON
 * error of a refusal); `close` ends it.
 */
function streamFrom(localAddress: string, url: string, method: string, params: unknown) {
  return postFrom<{ status: number; first: string; close(): void }>(localAddress, url, { method, params }, (res, req, resolve) =>
    res.once('data', (d: Buffer) => resolve({ status: res.statusCode!, first: d.toString(), close: () => req.destroy() })),
  );
}

/** One HTTP+JSON request from `localAddress`: its status and its body, parsed. */
function restFrom(localAddress: string, method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method,
        localAddress,
        headers: payload === undefined ? {} : { 'content-type': 'application/json' },
      },
      (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: data ? JSON.parse(data) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const msg = (id: string, text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: id, role: 'ROLE_USER', parts: [{ text }], ...extra },
  configuration: { returnImmediately: true },
});

/** One `shrooms-agent …` run against this mesh: its exit code and its output (stdout and stderr). */
async function cliRun(args: string[]): Promise<{ code: number | null; out: string }> {
  const p = runTs(CLI, args, { ...mesh.env, SHROOMS_GATEWAY_URL: mesh.gatewayUrl, LOG_LEVEL: 'warn' });
  const code = await new Promise<number | null>((r) => p.child.once('exit', r));
  return { code, out: p.output() };
}

beforeAll(async () => {
  peersDir = await tempDir('peers');
  const peers = join(peersDir.path, 'peers.yaml');
  await writeFile(peers, 'mesh: home\npeers:\n  127.0.0.2: laptop\n  127.0.0.3: pi5\n');
  mesh = await startMesh({
    guard: true,
    env: { SHROOMS_PEERS_FILE: peers },
    sessions: [
      { name: 'target' },
      { name: 'a' },
      { name: 'b' },
      { name: 'c' },
      { name: 'd' },
      { name: 'e' },
      { name: 'auto', env: { BRIDGE_AUTO_APPROVE: '1' } },
      { name: 'rest' },
    ],
  });
  // A second guard replica and a second gateway of the same machine.
  const guard2 = runTs(CLI, ['guard'], mesh.env);
  mesh.services.push(guard2);
  const port = await freePort();
  secondUrl = `http://127.0.0.1:${port}`;
  // Its front session (the HTTP+JSON routes at the host root) is `rest`; each device's share of its streams is 2.
  second = runTs(CLI, ['gateway'], {
    ...mesh.env,
    GATEWAY_PORT: String(port),
    GATEWAY_DEFAULT_SESSION: 'rest',
    LIMIT_SSE_STREAMS_PER_DEVICE: '2',
  });
  mesh.services.push(second);
  await Promise.all([guard2.waitFor(/guard ready/, 60_000), second.waitFor(/gateway listening/, 60_000)]);
});
afterAll(async () => {
  try {
    await mesh?.stop();
  } finally {
    await peersDir?.remove();
  }
});

describe('device identity', () => {
  it('names each device from its source address and shows the claimed session beside it', async () => {
    const r = await rpcFrom(
      '127.0.0.2',
      `${mesh.gatewayUrl}/a2a/a`,
      'SendMessage',
      msg('id-1', 'hi', { metadata: { 'shrooms/from': 'laptop/webapp' } }),
    );
    expect(r.result.task.metadata['shrooms/device']).toBe('laptop.home');
    expect(r.result.task.metadata['shrooms/from']).toBe('laptop/webapp');
    const p = await rpcFrom('127.0.0.3', `${mesh.gatewayUrl}/a2a/a`, 'SendMessage', msg('id-2', 'hi'));
    expect(p.result.task.metadata['shrooms/device']).toBe('pi5.home');
    const self = await rpc(`${mesh.gatewayUrl}/a2a/a`, 'SendMessage', msg('id-3', 'hi'));
    expect(self.result.task.metadata['shrooms/device']).toBe(mesh.machine);
  });

  it("keeps each device to its share of a gateway's streams, and another device still gets its own", async () => {
    const t = await rpcFrom('127.0.0.2', `${secondUrl}/a2a/a`, 'SendMessage', { message: msg('share-1', 'blocked: stay open').message });
    expect(t.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const subscribe = (from: string) => streamFrom(from, `${secondUrl}/a2a/a`, 'SubscribeToTask', { id: t.result.task.id });
    const laptop = [await subscribe('127.0.0.2'), await subscribe('127.0.0.2')];
    const pi5 = await subscribe('127.0.0.3');
    try {
      expect([...laptop, pi5].map((s) => s.first)).toEqual(Array(3).fill(expect.stringMatching(/^data: .*"task"/)));
      const third = await subscribe('127.0.0.2');
      third.close();
      expect(JSON.parse(third.first).error.data[0].metadata).toMatchObject({ limit: 'sseStreamsPerDevice', max: '2' });
      expect(JSON.parse(third.first).error.message).toContain('laptop.home holds 2 streams open on this gateway already');
    } finally {
      for (const s of [...laptop, pi5]) s.close();
    }
    // Its streams gone, the device has its share again.
    const again = await eventually(async () => {
      const s = await subscribe('127.0.0.2');
      s.close();
      return s.first.startsWith('data: ') ? s : undefined;
    });
    expect(again.status).toBe(200);
  });

  it('refuses a source the map does not name', async () => {
    const r = await rpcFrom('127.0.0.4', `${mesh.gatewayUrl}/a2a/a`, 'SendMessage', msg('id-4', 'hi'));
    expect(r.error).toMatchObject({ code: -32054, data: [expect.objectContaining({ reason: 'UNKNOWN_DEVICE' })] });
  });

  it('ignores a spoofed forwarded-for header', async () => {
    const r = await rpcFrom('127.0.0.2', `${mesh.gatewayUrl}/a2a/a`, 'SendMessage', msg('id-5', 'hi'), {
      'x-forwarded-for': '127.0.0.3',
      forwarded: 'for=127.0.0.3',
      'x-real-ip': '127.0.0.3',
    });
    expect(r.result.task.metadata['shrooms/device']).toBe('laptop.home');
    const u = await rpcFrom('127.0.0.4', `${mesh.gatewayUrl}/a2a/a`, 'SendMessage', msg('id-6', 'hi'), { 'x-forwarded-for': '127.0.0.1' });
    expect(u.error.code).toBe(-32054);
  });
});

describe('loop guard across two gateways and two guard replicas', () => {
  it('admits exactly 30 of 100 concurrent new tasks from one device to one session', async () => {
    const urls = [`${mesh.gatewayUrl}/a2a/target`, `${secondUrl}/a2a/target`];
    // The first of the 100 asks for input (its answer comes later); the other 99 race.
    const first = await rpcFrom('127.0.0.3', urls[0]!, 'SendMessage', msg('burst-0', 'blocked: which one?'));
    const rest = await Promise.all(
      Array.from({ length: 99 }, (_, i) => rpcFrom('127.0.0.3', urls[(i + 1) % 2]!, 'SendMessage', msg(`burst-${i + 1}`, `job ${i + 1}`))),
    );
    const results = [first, ...rest];
    const admitted = results.filter((r) => r.result);
    const refused = results.filter((r) => r.error);
    expect(admitted).toHaveLength(30);
    expect(refused).toHaveLength(70);
    for (const r of refused) {
      expect(r.error.code).toBe(-32050);
      expect(Number(r.error.data[0].metadata.retryAfterSeconds)).toBeGreaterThan(0);
    }
    // A resend of an admitted message is the same task, never counted or refused.
    const firstId = admitted[0].result.task.id as string;
    const resendIndex = Number(firstId.split('burst-')[1]);
    // The same message again (a reused id with other content is a MESSAGE_ID_CONFLICT instead).
    const sameText = resendIndex === 0 ? 'blocked: which one?' : `job ${resendIndex}`;
    const again = await rpcFrom('127.0.0.3', urls[0]!, 'SendMessage', msg(`burst-${resendIndex}`, sameText));
    expect(again.result.task.id).toBe(firstId);
    // An answer to a blocked task is not counted either.
    const blocked = first.result.task;
    await eventually(async () => (await rpc(urls[0]!, 'GetTask', { id: blocked.id })).result.status.state === 'TASK_STATE_INPUT_REQUIRED');
    const answer = await rpcFrom('127.0.0.3', urls[1]!, 'SendMessage', msg('burst-answer', 'this one', { taskId: blocked.id }));
    expect(answer.result.task.id).toBe(blocked.id);
    // ...while a new task from the same device is still refused: the window is full.
    expect((await rpcFrom('127.0.0.3', urls[0]!, 'SendMessage', msg('burst-late', 'more'))).error.code).toBe(-32050);
    // Another device still has its own window.
    const other = await rpcFrom('127.0.0.2', urls[0]!, 'SendMessage', msg('other-device', 'hi'));
    expect(other.result.task.id).toBe('target:other-device');
  });

  it('lets only the owner see or reset the window: the device it counts may not empty it', async () => {
    const url = `${mesh.gatewayUrl}/a2a/target`;
    for (const params of [{ device: 'pi5.home' }, { device: 'pi5.home', reset: true }, { reset: true }]) {
      const r = await rpcFrom('127.0.0.3', url, 'GuardWindow', params);
      expect(r.error?.code, JSON.stringify(params)).toBe(-32065);
    }
    // The window is still full for that device after its reset attempts; the owner's machine reads it.
    expect((await rpcFrom('127.0.0.3', url, 'SendMessage', msg('after-reset-attempt', 'more'))).error.code).toBe(-32050);
    const owner = await rpc(url, 'GuardWindow', { device: 'pi5.home' });
    expect(owner.result).toMatchObject({ device: 'pi5.home', session: 'target' });
  });
});

describe('the chain', () => {
  const name = (t: { id: string }) => `${mesh.machine}/${t.id}`;
  const ask = (session: string, id: string, parent?: { id: string }, from?: string) =>
    rpc(
      `${mesh.gatewayUrl}/a2a/${session}`,
      'SendMessage',
      msg(id, `quiet: ${id}`, {
        metadata: { ...(parent ? { 'shrooms/parent': name(parent) } : {}), ...(from ? { 'shrooms/from': `${mesh.machine}/${from}` } : {}) },
      }),
    );

  it('refuses A→B→C→A at the fourth hop with the cycle code', async () => {
    const a = (await ask('a', 'cy-a')).result.task;
    const b = (await ask('b', 'cy-b', a, 'a')).result.task;
    const c = (await ask('c', 'cy-c', b, 'b')).result.task;
    expect(c.metadata['shrooms/depth']).toBe(2);
    const back = await ask('a', 'cy-a2', c, 'c');
    expect(back.error).toMatchObject({ code: -32052, data: [expect.objectContaining({ reason: 'CHAIN_CYCLE' })] });
  });

  it('refuses a chain of depth 4 with no cycle with the depth code', async () => {
    const a = (await ask('a', 'dp-a')).result.task;
    const b = (await ask('b', 'dp-b', a, 'a')).result.task;
    const c = (await ask('c', 'dp-c', b, 'b')).result.task;
    const d = (await ask('d', 'dp-d', c, 'c')).result.task;
    expect(d.metadata['shrooms/depth']).toBe(3);
    const e = await ask('e', 'dp-e', d, 'd');
    expect(e.error).toMatchObject({ code: -32051, data: [expect.objectContaining({ reason: 'CHAIN_TOO_DEEP' })] });
  });
});

describe('the sharp edge', () => {
  it("holds an agent's task for an auto-approving session until its owner releases it", async () => {
    const t = (
      await rpc(
        `${mesh.gatewayUrl}/a2a/auto`,
        'SendMessage',
        msg('held-1', 'run this', { metadata: { 'shrooms/from': `${mesh.machine}/a` } }),
      )
    ).result.task;
    expect(t.metadata['shrooms/held']).toBe(true);
    // A task the session may run, sent after it: once that one is done, a held task let through would be too.
    const after = (await rpc(`${mesh.gatewayUrl}/a2a/auto`, 'SendMessage', msg('held-1-after', 'then this'))).result.task;
    expect(after.metadata['shrooms/held']).toBeUndefined();
    await eventually(
      async () => (await rpc(`${mesh.gatewayUrl}/a2a/auto`, 'GetTask', { id: after.id })).result.status.state === 'TASK_STATE_COMPLETED',
    );
    expect((await rpc(`${mesh.gatewayUrl}/a2a/auto`, 'GetTask', { id: t.id })).result.status.state).toBe('TASK_STATE_SUBMITTED');
    // Only the owner, on the machine itself, may release it.
    const stranger = await rpcFrom('127.0.0.2', `${mesh.gatewayUrl}/a2a/auto`, 'ControlSession', { action: 'release', id: t.id });
    expect(stranger.error.code).toBe(-32065);
    const released = await rpc(`${mesh.gatewayUrl}/a2a/auto`, 'ControlSession', { action: 'release', id: t.id });
    expect(released.result.task.id).toBe(t.id);
    await eventually(
      async () => (await rpc(`${mesh.gatewayUrl}/a2a/auto`, 'GetTask', { id: t.id })).result.status.state === 'TASK_STATE_COMPLETED',
    );
  });

  it('lets the owner reject a held task from the command line', async () => {
    const t = (
      await rpc(
        `${mesh.gatewayUrl}/a2a/auto`,
        'SendMessage',
        msg('held-2', 'rm -rf /', { metadata: { 'shrooms/from': `${mesh.machine}/b` } }),
      )
    ).result.task;
    expect(t.metadata['shrooms/held']).toBe(true);
    const cli = runTs(CLI, ['a2a', 'reject', `auto:${t.id.split(':')[1]}`, '--json'], {
      ...mesh.env,
      SHROOMS_GATEWAY_URL: mesh.gatewayUrl,
    });
    const code = await new Promise<number | null>((r) => cli.child.once('exit', r));
    // The reject worked: 0 (the help's "2" is for a task that failed you, or a refused act).
    expect(code, cli.output()).toBe(0);
    const after = (await rpc(`${mesh.gatewayUrl}/a2a/auto`, 'GetTask', { id: t.id })).result;
    expect(after.status.state).toBe('TASK_STATE_REJECTED');
    expect(after.status.message.parts[0].text).toMatch(/rejected by the owner/);
  });

  it('says a held task is held for the owner, and how to release it, in a2a get, a2a tasks and --wait', async () => {
    const t = (
      await rpc(
        `${mesh.gatewayUrl}/a2a/auto`,
        'SendMessage',
        msg('held-3', 'wait for me', { metadata: { 'shrooms/from': `${mesh.machine}/a` } }),
      )
    ).result.task;
    const name = `${mesh.machine}/auto:held-3`;
    const how = `held for the owner of ${mesh.machine}/auto: it runs once they release it (on that machine: shrooms-agent a2a release ${name}, or reject it)`;
    const get = await cliRun(['a2a', 'get', 'auto:held-3']);
    expect(get.code, get.out).toBe(0);
    expect(get.out).toContain(`${name} held, asked by ${mesh.machine} (${mesh.machine}/a)\n${how}`);
    const json = await cliRun(['a2a', 'get', 'auto:held-3', '--json']);
    expect(JSON.parse(json.out)).toMatchObject({ task: name, status: 'held', held: true });
    const tasks = await cliRun(['a2a', 'tasks', 'auto', '--state', 'submitted']);
    expect(tasks.out).toMatch(new RegExp(`${name}\\s+held\\s`));
    expect(tasks.out).toContain(`held: waiting for the owner of ${mesh.machine}/auto; on that machine: shrooms-agent a2a release TASK`);
    // Not on a terminal, --wait says once what it waits for (a line on stderr), then the task as it stands.
    const waited = await cliRun(['a2a', 'get', 'auto:held-3', '--wait', '--wait-seconds', '1']);
    expect(waited.out).toContain(`${name} ${how}\n`);
    expect(waited.out).toContain(`${name} is still held; follow it: shrooms-agent a2a get ${name} --wait\n${how}`);
    expect(t.metadata['shrooms/held']).toBe(true);
  });

  it("says in ask_agent's progress that the task is held for the owner, and how to release it", async () => {
    const client = await mcpOverStdio({ ...mesh.env, SHROOMS_AGENT_SESSION: 'b', SHROOMS_ASK_PROGRESS_MS: '200' });
    try {
      const progress: { message?: string }[] = [];
      const r: any = await client.callTool(
        { name: 'ask_agent', arguments: { to: 'auto', text: 'from an agent', wait_seconds: 1 } },
        undefined,
        {
          onprogress: (p) => progress.push(p),
        },
      );
      expect(r.structuredContent).toMatchObject({ status: 'held', held: true, waitedOut: true });
      const name = r.structuredContent.task;
      expect(progress[0]?.message).toBe(
        `${name} is held for the owner of ${mesh.machine}/auto: it runs once they release it (on that machine: shrooms-agent a2a release ${name}, or reject it) — waited 0 s of 1 s`,
      );
      expect(r.content[0].text).toContain(`It is held for the owner of ${mesh.machine}/auto`);
    } finally {
      await client.close();
    }
  });

  it("runs a person's task on an auto-approving session at once", async () => {
    const t = (
      await rpc(`${mesh.gatewayUrl}/a2a/auto`, 'SendMessage', {
        message: { messageId: 'person-1', role: 'ROLE_USER', parts: [{ text: 'go' }] },
      })
    ).result.task;
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('the HTTP+JSON doors: v0.3 under /a2a/{session}/v1/, v1.0 at the host root', () => {
  const v03 = () => `${mesh.gatewayUrl}/a2a/rest/v1`;
  const root = () => secondUrl;
  const send03 = (id: string, text: string, taskId?: string) => ({
    message: { messageId: id, role: 'ROLE_USER', content: [{ text }], ...(taskId ? { taskId } : {}) },
  });
  const send10 = (id: string, text: string, taskId?: string) => ({
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text }], ...(taskId ? { taskId } : {}) },
    configuration: { returnImmediately: true },
  });
  const state = async (id: string) => (await rpc(`${mesh.gatewayUrl}/a2a/rest`, 'GetTask', { id })).result?.status.state;
  const path = (id: string) => encodeURIComponent(id);

  it('refuses a source the map does not name on every v0.3 route and every root route, and creates nothing', async () => {
    const known = (await restFrom('127.0.0.2', 'POST', `${v03()}/message:send`, send03('rest-known', 'hi'))).body.task.id as string;
    const v03Routes: [string, string, unknown?][] = [
      ['POST', '/message:send', send03('rest-stranger-03', 'hi')],
      ['POST', '/message:stream', send03('rest-stranger-03s', 'hi')],
      ['GET', '/card'],
      ['GET', `/tasks/${path(known)}`],
      ['POST', `/tasks/${path(known)}:cancel`, {}],
      ['GET', `/tasks/${path(known)}:subscribe`],
      ['POST', `/tasks/${path(known)}:subscribe`, {}],
      ['GET', `/tasks/${path(known)}/pushNotificationConfigs`],
      ['POST', `/tasks/${path(known)}/pushNotificationConfigs`, { url: 'http://127.0.0.4/hook' }],
    ];
    for (const [method, route, body] of v03Routes) {
      const r = await restFrom('127.0.0.4', method, `${v03()}${route}`, body);
      expect(r.status, `${method} v1${route}`).toBe(403);
      // In v0.3's own error shape, as its routes answer every other error.
      expect(r.body, `${method} v1${route}`).toMatchObject({ code: -32054, data: [expect.objectContaining({ reason: 'UNKNOWN_DEVICE' })] });
    }
    const rootRoutes: [string, string, unknown?][] = [
      ['POST', '/message:send', send10('rest-stranger-10', 'hi')],
      ['POST', '/message:stream', send10('rest-stranger-10s', 'hi')],
      ['GET', '/tasks'],
      ['GET', `/tasks/${path(known)}`],
      ['POST', `/tasks/${path(known)}:cancel`, {}],
      ['GET', `/tasks/${path(known)}:subscribe`],
      ['POST', `/tasks/${path(known)}:ack`, {}],
      ['POST', `/tasks/${path(known)}:release`, {}],
      ['POST', `/tasks/${path(known)}:update`, { status: 'done', text: 'forged' }],
      ['POST', '/reminders:stop', {}],
      ['GET', '/extendedAgentCard'],
    ];
    for (const [method, route, body] of rootRoutes) {
      const r = await restFrom('127.0.0.4', method, `${root()}${route}`, body);
      expect(r.status, `${method} ${route}`).toBe(403);
      expect(r.body.error.details[0].reason, `${method} ${route}`).toBe('UNKNOWN_DEVICE');
    }
    for (const id of ['rest-stranger-03', 'rest-stranger-03s', 'rest-stranger-10', 'rest-stranger-10s'])
      expect(await state(`rest:${id}`), id).toBeUndefined();
    // The same routes answer a device of the mesh (the refusals above were the door's).
    expect((await restFrom('127.0.0.2', 'GET', `${v03()}/tasks/${path(known)}`)).status).toBe(200);
    expect((await restFrom('127.0.0.2', 'GET', `${root()}/tasks/${path(known)}`)).status).toBe(200);
  });

  it.each([
    ['v0.3 under /a2a/rest/v1', v03, send03],
    ['v1.0 at the host root', root, send10],
  ])('%s: lets another device neither answer nor cancel a task, and the device that asked do both', async (name, base, send) => {
    const tag = name.startsWith('v0.3') ? '03' : '10';
    const asked = (await restFrom('127.0.0.2', 'POST', `${base()}/message:send`, send(`rest-b-${tag}`, 'blocked: which branch?'))).body
      .task;
    expect(asked.id).toBe(`rest:rest-b-${tag}`);
    await eventually(async () => (await state(asked.id)) === 'TASK_STATE_INPUT_REQUIRED');
    const forbidden = (r: { status: number; body: any }) => {
      expect(r.status).toBe(403);
      if (tag === '03') expect(r.body).toMatchObject({ code: -32065, data: [expect.objectContaining({ reason: 'ACTION_FORBIDDEN' })] });
      else expect(r.body.error.details[0].reason).toBe('ACTION_FORBIDDEN');
    };
    forbidden(await restFrom('127.0.0.3', 'POST', `${base()}/message:send`, send(`rest-b-${tag}-pi5`, 'rm -rf', asked.id)));
    forbidden(await restFrom('127.0.0.3', 'POST', `${base()}/tasks/${path(asked.id)}:cancel`, {}));
    expect(await state(asked.id)).toBe('TASK_STATE_INPUT_REQUIRED');
    // The asker answers it; asked again, it cancels it.
    const answered = await restFrom(
      '127.0.0.2',
      'POST',
      `${base()}/message:send`,
      send(`rest-b-${tag}-re`, 'blocked: and which file?', asked.id),
    );
    expect(answered.status).toBe(200);
    await eventually(
      async () =>
        (await state(asked.id)) === 'TASK_STATE_INPUT_REQUIRED' &&
        (await rpc(`${mesh.gatewayUrl}/a2a/rest`, 'GetTask', { id: asked.id, historyLength: 10 })).result.history.length >= 3,
    );
    const canceled = await restFrom('127.0.0.2', 'POST', `${base()}/tasks/${path(asked.id)}:cancel`, {});
    expect(canceled.status).toBe(200);
    expect(await state(asked.id)).toBe('TASK_STATE_CANCELED');
  });
});
