/**
 * Client reach on the wire, raw HTTP as curl sends it: the v0.3 shapes served beside v1.0, and
 * refusals people can act on — `Retry-After` on every retryable 429/503 in both bindings, and
 * each limit's error naming the setting that raises it.
 *
 * Over 300 lines: what a client sees on the wire, read in one place; its three meshes (v0.3, the
 * guard's refusals, the tck harness) share the raw-HTTP helpers at the top.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, eventually, rpc, runTs, startMesh, type Mesh } from '@shrooms/testing';

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
const call = (method: string, params: unknown, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params });
const msg03 = (id: string, text: string, extra: Record<string, unknown> = {}) => ({
  message: { kind: 'message', messageId: id, role: 'user', parts: [{ kind: 'text', text }], ...extra },
});
const msg = (id: string, text = id) => ({ message: { messageId: id, role: 'ROLE_USER', parts: [{ text }] } });

describe('v0.3 beside v1.0', () => {
  let mesh: Mesh;
  let url: string;
  beforeAll(async () => {
    mesh = await startMesh({ sessions: [{ name: 'demo' }, { name: 'busy', env: { ECHO_DELAY_MS: '600000', LIMIT_QUEUE_LENGTH: '1' } }] });
    url = `${mesh.gatewayUrl}/a2a/demo`;
  });
  afterAll(async () => {
    await mesh?.stop();
  });

  it('puts url, preferredTransport and protocolVersion on the card beside supportedInterfaces', async () => {
    const card: any = await (await fetch(`${url}/.well-known/agent-card.json`)).json();
    expect(card).toMatchObject({ url, preferredTransport: 'JSONRPC', protocolVersion: '0.3.0' });
    expect(card.supportedInterfaces[0]).toEqual({ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' });
    expect(card.description).not.toMatch(mesh.tmp);
    expect(card.description).toMatch(/^\S+\/demo: an echo session on the shrooms agent mesh\./);
  });

  it('answers message/send with the Task itself: kind, lower-case state and role, kind on parts', async () => {
    const r = await post(url, call('message/send', msg03('v03-send', 'hi')), { 'A2A-Version': '0.3' });
    const { result } = JSON.parse(r.text);
    expect(result).toMatchObject({ kind: 'task', id: 'demo:v03-send', status: { state: 'completed' } });
    expect(result.artifacts[0].parts).toEqual([{ kind: 'text', text: 'hi' }]);
    expect(result.status.message).toBeUndefined();
    const v1 = await rpc(url, 'GetTask', { id: 'demo:v03-send', historyLength: 5 });
    expect(v1.result.history[0]).toMatchObject({ role: 'ROLE_USER', parts: [{ text: 'hi' }] });
    const back = await rpc(url, 'tasks/get', { id: 'demo:v03-send', historyLength: 5 }, {});
    expect(back.result.history[0]).toMatchObject({ kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'hi' }] });
  });

  it('streams message/stream as v0.3 events, the closing status update final', async () => {
    const r = await post(url, call('message/stream', msg03('v03-stream', 'streamed')));
    expect(r.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = r.text
      .split('\n\n')
      .map((f) => f.split('\n').find((l) => l.startsWith('data: ')))
      .filter((d): d is string => !!d)
      .map((d) => JSON.parse(d.slice(6)).result);
    expect(events[0]).toMatchObject({ kind: 'task', id: 'demo:v03-stream' });
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', taskId: 'demo:v03-stream', final: true, status: { state: 'completed' } });
    expect(events.slice(1, -1).every((e) => e.final !== true)).toBe(true);
  });

  it('ends a v0.3 stream on a final status update also when the task was done before it began', async () => {
    // The same message again: its task is already completed, so the stream's first event closes it.
    await post(url, call('message/send', msg03('v03-again', 'once')));
    const r = await post(url, call('message/stream', msg03('v03-again', 'once')));
    const events = r.text
      .split('\n\n')
      .map((f) => f.split('\n').find((l) => l.startsWith('data: ')))
      .filter((d): d is string => !!d)
      .map((d) => JSON.parse(d.slice(6)).result);
    expect(events).toMatchObject([
      { kind: 'task', id: 'demo:v03-again', status: { state: 'completed' } },
      { kind: 'status-update', taskId: 'demo:v03-again', final: true, status: { state: 'completed' } },
    ]);
  });

  it('serves v0.3 over HTTP+JSON under /v1/ in the v0.3 proto shapes, on the same ledger', async () => {
    const card: any = await (await fetch(`${url}/.well-known/agent-card.json`)).json();
    expect(card.additionalInterfaces).toContainEqual({ url, transport: 'HTTP+JSON' });
    // What @a2a-js/sdk 0.3's RestTransport sends: `content`, proto role names, `{data: {data}}`, no A2A-Version.
    const sent = await post(`${url}/v1/message:send`, {
      message: {
        messageId: 'v03-rest-1',
        role: 'ROLE_USER',
        content: [{ text: 'rest hi' }, { data: { data: { n: 1 } } }],
        metadata: {},
      },
      configuration: { blocking: true },
    });
    expect(sent.status).toBe(200);
    const { task } = JSON.parse(sent.text);
    expect(task).toMatchObject({ id: 'demo:v03-rest-1', status: { state: 'TASK_STATE_COMPLETED' } });
    expect(task.kind).toBeUndefined();
    expect(Object.keys(task.artifacts[0].parts[0])).toEqual(['text']); // the echo of the text, with the data part's note
    expect(task.artifacts[0].parts[0].text).toMatch(/^rest hi/);
    expect(task.history[0]).toMatchObject({ role: 'ROLE_USER', content: [{ text: 'rest hi' }, { data: { data: { n: 1 } } }] });
    expect(task.history[0].parts).toBeUndefined();
    // One ledger: v1.0 reads it, and v0.3 REST reads a v1.0 task.
    expect((await rpc(url, 'GetTask', { id: 'demo:v03-rest-1', historyLength: 5 })).result.history[0].parts[1]).toEqual({ data: { n: 1 } });
    await rpc(url, 'SendMessage', msg('v03-rest-v1', 'asked in v1.0'));
    const got = await fetch(`${url}/v1/tasks/${encodeURIComponent('demo:v03-rest-v1')}?historyLength=5`);
    expect(((await got.json()) as any).history[0]).toMatchObject({ role: 'ROLE_USER', content: [{ text: 'asked in v1.0' }] });
    // A stream: Task first, the closing status update final; a cancel answers TASK_STATE_CANCELLED.
    const stream = await post(`${url}/v1/message:stream`, {
      message: { messageId: 'v03-rest-2', role: 'ROLE_USER', content: [{ text: 'blocked: which branch?' }] },
    });
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = stream.text
      .split('\n\n')
      .map((f) => f.split('\n').find((l) => l.startsWith('data: ')))
      .filter((d): d is string => !!d)
      .map((d) => JSON.parse(d.slice(6)));
    expect(events[0]).toMatchObject({ task: { id: 'demo:v03-rest-2' } });
    expect(events.at(-1)).toMatchObject({ statusUpdate: { final: true, status: { state: 'TASK_STATE_INPUT_REQUIRED' } } });
    const canceled = await post(`${url}/v1/tasks/${encodeURIComponent('demo:v03-rest-2')}:cancel`, undefined);
    expect(JSON.parse(canceled.text).status.state).toBe('TASK_STATE_CANCELLED');
    // Errors: the JSON-RPC code beside the HTTP status, as the v0.3 client reads them.
    const missing = await fetch(`${url}/v1/tasks/${encodeURIComponent('demo:none')}`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: -32001, message: expect.any(String) });
  });

  it('gives a file part sent over v0.3 HTTP+JSON back with its name, media type and metadata, as JSON-RPC does', async () => {
    const bytes = Buffer.from('hello file\n').toString('base64');
    const file = { fileWithBytes: bytes, mimeType: 'text/plain', name: 'notes.txt' };
    const link = { fileWithUri: 'https://example.invalid/spec.pdf', mimeType: 'application/pdf', name: 'spec.pdf' };
    const content = [{ text: 'see these' }, { file, metadata: { from: 'rest' } }, { file: link }];
    const sent = await post(`${url}/v1/message:send`, {
      message: { messageId: 'v03-rest-file', role: 'ROLE_USER', content },
      configuration: { blocking: true },
    });
    expect(sent.status).toBe(200);
    expect(JSON.parse(sent.text).task.history[0].content).toEqual(content);
    const got = await fetch(`${url}/v1/tasks/${encodeURIComponent('demo:v03-rest-file')}?historyLength=5`);
    expect(((await got.json()) as any).history[0].content).toEqual(content);
    // The same task over v0.3 JSON-RPC and v1.0: the same fields under their names.
    const rpc03 = await rpc(url, 'tasks/get', { id: 'demo:v03-rest-file', historyLength: 5 }, {});
    expect(rpc03.result.history[0].parts.slice(1)).toEqual([
      { kind: 'file', file: { bytes, mimeType: 'text/plain', name: 'notes.txt' }, metadata: { from: 'rest' } },
      { kind: 'file', file: { uri: link.fileWithUri, mimeType: 'application/pdf', name: 'spec.pdf' } },
    ]);
    const v1 = await rpc(url, 'GetTask', { id: 'demo:v03-rest-file', historyLength: 5 });
    expect(v1.result.history[0].parts.slice(1)).toEqual([
      { raw: bytes, filename: 'notes.txt', mediaType: 'text/plain', metadata: { from: 'rest' } },
      { url: link.fileWithUri, filename: 'spec.pdf', mediaType: 'application/pdf' },
    ]);
  });

  it('refuses a v0.3 message without kind on its parts with -32602, and v1.0 parts under v0.3 names', async () => {
    const r = JSON.parse(
      (await post(url, call('message/send', { message: { messageId: 'v03-bad', role: 'user', parts: [{ text: 'x' }] } }))).text,
    );
    expect(r.error.code).toBe(-32602);
  });

  it('answers an unknown version with -32009 and serves 1.0.1 as 1.0', async () => {
    expect(JSON.parse((await post(url, call('GetTask', { id: 'demo:none' }), { 'A2A-Version': '0.4' })).text).error.code).toBe(-32009);
    expect(JSON.parse((await post(url, call('GetTask', { id: 'demo:none' }), { 'A2A-Version': '1.0.1' })).text).error.code).toBe(-32001);
  });

  it('serves the endpoint as up prints it, with its trailing slash', async () => {
    const r = JSON.parse((await post(`${url}/`, call('GetTask', { id: 'demo:v03-send' }), { 'A2A-Version': '1.0' })).text);
    expect(r.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await fetch(`${mesh.gatewayUrl}/a2a/.well-known/agent-card.json`)).status).toBe(200);
  });

  it('answers a text/plain body with ContentTypeNotSupported on both bindings, and a browser page’s with CROSS_SITE_REFUSED, creating no task', async () => {
    const raw = (path: string, headers: Record<string, string>, body: unknown) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { 'A2A-Version': '1.0', ...headers }, body: JSON.stringify(body) });
    // What the A2A TCK sends: JSON with the wrong Content-Type, no Origin.
    const rpcRes = await raw('', { 'content-type': 'text/plain' }, call('SendMessage', msg('ct-rpc')));
    expect(rpcRes.status).toBe(200);
    expect(((await rpcRes.json()) as any).error).toMatchObject({ code: -32005, data: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] });
    const restRes = await raw('/message:send', { 'content-type': 'text/plain' }, msg('ct-rest'));
    expect(restRes.status).toBe(400);
    expect(((await restRes.json()) as any).error).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      details: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }],
    });
    // A cross-site form post: refused at the door as before, before the body is read.
    const form = await raw('', { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://attacker.example' }, 'x');
    expect(((await form.json()) as any).error.code).toBe(-32068);
    for (const id of ['demo:ct-rpc', 'demo:ct-rest']) expect((await rpc(url, 'GetTask', { id })).error?.code, id).toBe(-32001);
  });

  it('delivers file, link and data parts into the session: the file under its cwd, the data as JSON, the link unfetched', async () => {
    const bytes = Buffer.from('hello file\n').toString('base64');
    const r = await rpc(url, 'SendMessage', {
      message: {
        messageId: 'parts-1',
        role: 'ROLE_USER',
        parts: [
          { text: 'look at these' },
          { raw: bytes, filename: '../../escape.txt', mediaType: 'text/plain' },
          { data: { branch: 'main', n: 2 } },
          { url: 'https://example.invalid/spec.pdf', filename: 'spec.pdf', mediaType: 'application/pdf' },
        ],
      },
    });
    expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const file = join(mesh.tmp, 'demo', '.shrooms', 'inbox', 'demo_parts-1', 'escape.txt');
    expect(await readFile(file, 'utf8')).toBe('hello file\n');
    // The echo answers with what it was given: the note names the file, shows the data, lists the link.
    const answer = r.result.task.artifacts[0].parts[0].text as string;
    expect(answer).toContain('.shrooms/inbox/demo_parts-1/escape.txt (11 bytes, text/plain)');
    expect(answer).toContain('"branch": "main"');
    expect(answer).toContain('https://example.invalid/spec.pdf (spec.pdf, application/pdf) — not downloaded');
    // The parts are kept as sent, and read in v0.3 as file and data parts.
    const v03 = await rpc(url, 'tasks/get', { id: 'demo:parts-1' });
    expect(v03.result.history[0].parts.slice(1)).toEqual([
      { kind: 'file', file: { bytes, name: '../../escape.txt', mimeType: 'text/plain' } },
      { kind: 'data', data: { branch: 'main', n: 2 } },
      { kind: 'file', file: { uri: 'https://example.invalid/spec.pdf', name: 'spec.pdf', mimeType: 'application/pdf' } },
    ]);
  });

  it('refuses a file part over LIMIT_PART_BYTES and a URL that is not http(s)', async () => {
    const big = Buffer.alloc(65 * 1024).toString('base64');
    const r = await post(`${url}/message:send`, { message: { messageId: 'big-part', role: 'ROLE_USER', parts: [{ raw: big }] } });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text).error.message).toMatch(/LIMIT_PART_BYTES/);
    const f = await rpc(url, 'SendMessage', { message: { messageId: 'ftp', role: 'ROLE_USER', parts: [{ url: 'file:///etc/passwd' }] } });
    expect(f.error.code).toBe(-32602);
  });

  it('refuses a message id reused for other content, and answers a true resend with the same task', async () => {
    expect((await rpc(url, 'SendMessage', msg('reused', 'first'))).result.task.id).toBe('demo:reused');
    expect((await rpc(url, 'SendMessage', msg('reused', 'first'))).result.task.id).toBe('demo:reused');
    const other = await rpc(url, 'SendMessage', msg('reused', 'something else'));
    expect(other.error).toMatchObject({ code: -32058, data: [{ reason: 'MESSAGE_ID_CONFLICT' }] });
  });

  it('names the setting that raises a limit', async () => {
    const r = await rpc(url, 'SendMessage', msg('too-long', 'y'.repeat(65 * 1024)));
    expect(r.error.code).toBe(-32057);
    expect(r.error.message).toMatch(/raise it with LIMIT_TEXT_BYTES/);
    expect(r.error.data[0].metadata).toMatchObject({ limit: 'textBytes', setting: 'LIMIT_TEXT_BYTES' });
  });

  it('sends Retry-After with QUEUE_FULL on JSON-RPC (HTTP 200) and on HTTP+JSON (429)', async () => {
    const busy = `${mesh.gatewayUrl}/a2a/busy`;
    const now = { configuration: { returnImmediately: true } };
    await rpc(busy, 'SendMessage', { ...msg('b1'), ...now });
    await eventually(async () => (await rpc(busy, 'GetTask', { id: 'busy:b1' })).result.status.state === 'TASK_STATE_WORKING');
    await rpc(busy, 'SendMessage', { ...msg('b2'), ...now });
    const j = await post(busy, call('SendMessage', { ...msg('b3'), ...now }), { 'A2A-Version': '1.0' });
    expect(JSON.parse(j.text).error.code).toBe(-32063);
    expect(j.headers.get('retry-after')).toBe('30');
    const r = await post(`${busy}/message:send`, { ...msg('b4'), ...now }, { 'A2A-Version': '1.0' });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('30');
    expect(JSON.parse(r.text).error.message).toMatch(/LIMIT_QUEUE_LENGTH/);
  });
});

// GATEWAY_GUARD=service asks a guard process; local (the default of `up`) admits in the gateway's
// own process, with no guard process running: the same answers either way.
describe.each(['service', 'local'] as const)('the loop guard, admitted by GATEWAY_GUARD=%s', (how) => {
  let mesh: Mesh;
  beforeAll(async () => {
    mesh = await startMesh({ guard: how === 'service', env: { GUARD_RATE_MAX: '1', GATEWAY_GUARD: how }, sessions: [{ name: 'demo' }] });
    expect(mesh.services.some((s) => /guard ready/.test(s.output()))).toBe(how === 'service');
  });
  afterAll(async () => {
    await mesh?.stop();
  });

  it('refuses past the window with -32050 / 429, Retry-After, and the setting that raises it', async () => {
    const url = `${mesh.gatewayUrl}/a2a/demo`;
    expect((await rpc(url, 'SendMessage', msg('g1'))).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const j = await post(url, call('SendMessage', msg('g2')), { 'A2A-Version': '1.0' });
    const err = JSON.parse(j.text).error;
    expect(err.code).toBe(-32050);
    expect(err.message).toMatch(/GUARD_RATE_MAX/);
    const wait = Number(j.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBe(Math.max(1, Math.ceil(Number(err.data[0].metadata.retryAfterSeconds))));
    const r = await post(`${url}/message:send`, msg('g3'), { 'A2A-Version': '1.0' });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    const v03 = await post(url, call('message/send', msg03('g4', 'x')));
    expect(JSON.parse(v03.text).error.code).toBe(-32050);
    expect(v03.headers.get('retry-after')).not.toBeNull();
  });

  it('lets the owner see and reset the window from the CLI, and the next task is admitted', async () => {
    const cli = async (args: string[]) => {
      const p = runTs(CLI, ['a2a', ...args], { ...mesh.env, SHROOMS_GATEWAY_URL: mesh.gatewayUrl });
      const code = p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
      return { code, out: p.output() };
    };
    const seen = await cli(['guard', 'demo', '--json']);
    expect(seen.code, seen.out).toBe(0);
    expect(JSON.parse(seen.out)).toMatchObject({
      device: mesh.machine,
      session: 'demo',
      count: 1,
      reserved: 0,
      limit: 1,
      ids: [expect.any(String)],
    });
    const reset = await cli(['guard', 'demo', '--reset']);
    expect(reset.out).toMatch(/reset; .* 0 of 1 new tasks .* admitted now/);
    expect((await rpc(`${mesh.gatewayUrl}/a2a/demo`, 'SendMessage', msg('g5'))).result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it.runIf(how === 'service')('answers GUARD_UNAVAILABLE with 503 and Retry-After when no guard answers', async () => {
    const guard = mesh.services.find((s) => /guard ready/.test(s.output()))!;
    await guard.stop();
    const url = `${mesh.gatewayUrl}/a2a/demo`;
    const r = await post(`${url}/message:send`, msg('u1'), { 'A2A-Version': '1.0' });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('2');
    const j = await post(url, call('SendMessage', msg('u2')), { 'A2A-Version': '1.0' });
    expect(JSON.parse(j.text).error.code).toBe(-32055);
    expect(j.headers.get('retry-after')).toBe('2');
  });
});

describe('the tck harness behind the host root, as the A2A TCK finds it', () => {
  let mesh: Mesh;
  beforeAll(async () => {
    mesh = await startMesh({
      env: { GATEWAY_DEFAULT_SESSION: 'tck' },
      sessions: [{ name: 'tck', harness: 'tck' as 'echo' }, { name: 'other' }],
    });
  });
  afterAll(async () => {
    await mesh?.stop();
  });

  it('leads the host-root card to the tck session and serves POST /a2a there', async () => {
    const card: any = await (await fetch(`${mesh.gatewayUrl}/.well-known/agent-card.json`)).json();
    expect(card.supportedInterfaces.map((i: any) => i.url)).toEqual([`${mesh.gatewayUrl}/a2a/tck`, `${mesh.gatewayUrl}/a2a/tck`]);
    const done = await rpc(`${mesh.gatewayUrl}/a2a`, 'SendMessage', msg('tck-complete-task-1', 'hi'));
    expect(done.result.task).toMatchObject({ id: 'tck:tck-complete-task-1', status: { state: 'TASK_STATE_COMPLETED' } });
    // With a trailing slash it is the same endpoint, not a session named "".
    const slash = await rpc(`${mesh.gatewayUrl}/a2a/`, 'SendMessage', msg('tck-complete-task-2', 'hi'));
    expect(slash.result.task).toMatchObject({ id: 'tck:tck-complete-task-2', status: { state: 'TASK_STATE_COMPLETED' } });
  });

  it('behaves by message-id prefix: input-required until answered, failed for tck-fail', async () => {
    const url = `${mesh.gatewayUrl}/a2a/tck`;
    const asked = await rpc(url, 'SendMessage', msg('tck-input-required-1', 'start'));
    expect(asked.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const answer = { message: { ...msg('tck-input-required-1b', 'more').message, taskId: asked.result.task.id } };
    expect((await rpc(url, 'SendMessage', answer)).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await rpc(url, 'SendMessage', msg('tck-fail-1'))).result.task.status.state).toBe('TASK_STATE_FAILED');
  });

  it('rejects tck-reject-task and holds tck-auth-required at AUTH_REQUIRED (a blocking send returns there) until answered', async () => {
    const url = `${mesh.gatewayUrl}/a2a`;
    const rejected = await rpc(url, 'SendMessage', msg('tck-reject-task-1'));
    expect(rejected.result.task.status.state).toBe('TASK_STATE_REJECTED');
    const auth = await rpc(url, 'SendMessage', msg('tck-auth-required-1', 'TCK auth-required task creation'));
    expect(auth.result.task.status.state).toBe('TASK_STATE_AUTH_REQUIRED');
    expect((await rpc(url, 'GetTask', { id: auth.result.task.id })).result.status.state).toBe('TASK_STATE_AUTH_REQUIRED');
    // Over HTTP+JSON and in v0.3 too: the same ledger.
    const rest: any = await (await fetch(`${mesh.gatewayUrl}/a2a/tck/tasks/${encodeURIComponent(auth.result.task.id)}`)).json();
    expect(rest.status.state).toBe('TASK_STATE_AUTH_REQUIRED');
    expect((await rpc(url, 'tasks/get', { id: auth.result.task.id }, {})).result.status.state).toBe('auth-required');
    const answer = { message: { ...msg('tck-auth-required-1b', 'authorized').message, taskId: auth.result.task.id } };
    expect((await rpc(url, 'SendMessage', answer)).result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('serves HTTP+JSON at the host root for the front session, where a TCK that keeps only the origin sends it', async () => {
    const sent = await post(`${mesh.gatewayUrl}/message:send`, msg('tck-complete-task-root', 'at the root'), { 'A2A-Version': '1.0' });
    expect(sent.status).toBe(200);
    const { task } = JSON.parse(sent.text);
    expect(task).toMatchObject({ id: 'tck:tck-complete-task-root', status: { state: 'TASK_STATE_COMPLETED' } });
    const got: any = await (
      await fetch(`${mesh.gatewayUrl}/tasks/${encodeURIComponent(task.id)}`, { headers: { 'A2A-Version': '1.0' } })
    ).json();
    expect(got.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await fetch(`${mesh.gatewayUrl}/tasks/${encodeURIComponent('tck:none')}`)).status).toBe(404);
  });

  it('returns the artifact parts the TCK asks for first: a file, a URL, data', async () => {
    const url = `${mesh.gatewayUrl}/a2a`;
    const first = async (id: string) => (await rpc(url, 'SendMessage', msg(id))).result.task.artifacts[0].parts[0];
    expect(await first('tck-artifact-file-1')).toEqual({ raw: 'dGNr', mediaType: 'text/plain', filename: 'output.txt' });
    expect(await first('tck-artifact-file-url-1')).toMatchObject({ url: 'https://example.com/output.txt' });
    expect(await first('tck-artifact-data-1')).toEqual({ data: { key: 'value', count: 42 } });
  });
});
