/** Raw HTTP pins the exact error shapes and codes of both bindings (spec §4). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpc, startMesh, type Mesh } from '@shrooms/testing';

let mesh: Mesh;
let url: string;
beforeAll(async () => {
  mesh = await startMesh({ sessions: [{ name: 'demo' }] });
  url = `${mesh.gatewayUrl}/a2a/demo`;
});
afterAll(async () => {
  await mesh?.stop();
});

const errorInfo = (reason: string) =>
  expect.arrayContaining([expect.objectContaining({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason })]);

async function raw(path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const res = await fetch(`${mesh.gatewayUrl}${path}`, { ...init, headers: { 'content-type': 'application/json', ...init.headers } });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

describe('JSON-RPC errors', () => {
  it('answers an unknown task with -32001 and its ErrorInfo', async () => {
    const r = await rpc(url, 'GetTask', { id: 'demo:nope' });
    expect(r.error).toMatchObject({ code: -32001, data: errorInfo('TASK_NOT_FOUND') });
    expect(r.id).toBe(1);
  });

  it('answers cancel of a finished task with -32002', async () => {
    const sent = await rpc(url, 'SendMessage', { message: { messageId: 'fin-1', role: 'ROLE_USER', parts: [{ text: 'x' }] } });
    expect(sent.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const r = await rpc(url, 'CancelTask', { id: sent.result.task.id });
    expect(r.error).toMatchObject({ code: -32002, data: errorInfo('TASK_NOT_CANCELABLE') });
  });

  it('answers bad params with -32602', async () => {
    const r = await rpc(url, 'SendMessage', { message: { messageId: 'x', role: 'ROLE_USER', parts: 'nope' } });
    expect(r.error).toMatchObject({ code: -32602, data: errorInfo('INVALID_PARAMS') });
    expect(r.error.message).toMatch(/parts/);
  });

  it('answers an unknown method with -32601', async () => {
    const r = await rpc(url, 'message/sned', {});
    expect(r.error).toMatchObject({ code: -32601, data: errorInfo('METHOD_NOT_FOUND') });
  });

  it('answers an unsupported version with -32009 and serves a request without the header', async () => {
    const r = await rpc(url, 'GetTask', { id: 'demo:nope' }, { 'A2A-Version': '2.0' });
    expect(r.error).toMatchObject({ code: -32009, data: errorInfo('VERSION_NOT_SUPPORTED') });
    // A patch never decides, and 0.3 is served beside 1.0.
    for (const v of ['1.0.1', '1', '0.3', '0.3.0'])
      expect((await rpc(url, 'GetTask', { id: 'demo:nope' }, { 'A2A-Version': v })).error.code).toBe(-32001);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'demo:nope' } }),
    });
    expect(((await res.json()) as any).error.code).toBe(-32001);
  });

  it('answers broken JSON with -32700 and a non-request with -32600', async () => {
    const a = await raw('/a2a/demo', { method: 'POST', body: '{"jsonrpc":' });
    expect(a.body.error).toMatchObject({ code: -32700, data: errorInfo('PARSE_ERROR') });
    const b = await raw('/a2a/demo', { method: 'POST', body: '[1,2]' });
    expect(b.body.error).toMatchObject({ code: -32600 });
  });

  it('answers an oversize body with LIMIT_EXCEEDED, not a crash', async () => {
    const big = 'x'.repeat(200 * 1024);
    const r = await raw('/a2a/demo', {
      method: 'POST',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'big', role: 'ROLE_USER', parts: [{ text: big }] } },
      }),
    });
    expect(r.body.error).toMatchObject({ code: -32057, data: errorInfo('LIMIT_EXCEEDED') });
    const ok = await rpc(url, 'GetTask', { id: 'demo:nope' });
    expect(ok.error.code).toBe(-32001);
  });

  it('refuses text over the per-message limit and parts of no media type with clear codes', async () => {
    const r = await rpc(url, 'SendMessage', {
      message: { messageId: 'big2', role: 'ROLE_USER', parts: [{ text: 'y'.repeat(65 * 1024) }] },
    });
    expect(r.error).toMatchObject({ code: -32057 });
    expect(r.error.message).toMatch(/65536/);
    const f = await rpc(url, 'SendMessage', {
      message: { messageId: 'file', role: 'ROLE_USER', parts: [{ url: 'https://example.invalid/a.png', mediaType: 'not a type' }] },
    });
    expect(f.error).toMatchObject({ code: -32005, data: errorInfo('CONTENT_TYPE_NOT_SUPPORTED') });
  });

  it('answers push-config methods with PushNotificationNotSupported and the extended card with UnsupportedOperation', async () => {
    expect((await rpc(url, 'CreateTaskPushNotificationConfig', { taskId: 'demo:x', url: 'http://x' })).error.code).toBe(-32003);
    expect((await rpc(url, 'GetExtendedAgentCard', {})).error).toMatchObject({ code: -32004, data: errorInfo('UNSUPPORTED_OPERATION') });
  });

  it('answers an unknown session with SESSION_NOT_FOUND', async () => {
    const r = await rpc(`${mesh.gatewayUrl}/a2a/ghost`, 'SendMessage', {
      message: { messageId: 'g', role: 'ROLE_USER', parts: [{ text: 'x' }] },
    });
    expect(r.error).toMatchObject({ code: -32056, data: errorInfo('SESSION_NOT_FOUND') });
  });
});

describe('HTTP+JSON errors', () => {
  it('answers an unknown task with 404 google.rpc.Status', async () => {
    const r = await raw('/a2a/demo/tasks/demo:nope');
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 404, status: 'NOT_FOUND', details: errorInfo('TASK_NOT_FOUND') });
  });

  it('answers cancel of a finished task with 400 FAILED_PRECONDITION', async () => {
    const sent = await raw('/a2a/demo/message:send', {
      method: 'POST',
      body: JSON.stringify({ message: { messageId: 'rest-fin', role: 'ROLE_USER', parts: [{ text: 'x' }] } }),
    });
    expect(sent.status).toBe(200);
    const r = await raw(`/a2a/demo/tasks/${encodeURIComponent(sent.body.task.id)}:cancel`, { method: 'POST', body: '{}' });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ status: 'FAILED_PRECONDITION', details: errorInfo('TASK_NOT_CANCELABLE') });
  });

  it('answers bad params, unsupported version and oversize bodies with their statuses', async () => {
    const bad = await raw('/a2a/demo/tasks?pageSize=500');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual(errorInfo('INVALID_PARAMS'));
    const ver = await raw('/a2a/demo/tasks', { headers: { 'A2A-Version': '2.0' } });
    expect(ver.status).toBe(400);
    expect(ver.body.error.details).toEqual(errorInfo('VERSION_NOT_SUPPORTED'));
    const big = await raw('/a2a/demo/message:send', {
      method: 'POST',
      body: JSON.stringify({ message: { messageId: 'b', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(200 * 1024) }] } }),
    });
    expect(big.status).toBe(413);
    expect(big.body.error.details).toEqual(errorInfo('LIMIT_EXCEEDED'));
  });

  it('answers an unknown route with 404 and an unknown verb with 404 UNIMPLEMENTED', async () => {
    expect((await raw('/nope')).status).toBe(404);
    const r = await raw('/a2a/demo/tasks/demo:x:explode', { method: 'POST', body: '{}' });
    expect(r.status).toBe(404);
  });
});

describe('cards', () => {
  it('serves spec JSON with ETag and Cache-Control, and 304 on a match', async () => {
    const res = await fetch(`${mesh.gatewayUrl}/a2a/demo/.well-known/agent-card.json`);
    const card = (await res.json()) as any;
    expect(card.supportedInterfaces[0]).toMatchObject({ protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
    expect(card.capabilities.extensions[0].required).toBe(false);
    expect(JSON.stringify(card)).not.toContain('$case');
    const etag = res.headers.get('etag')!;
    expect(res.headers.get('cache-control')).toMatch(/max-age/);
    const again = await fetch(`${mesh.gatewayUrl}/a2a/demo/.well-known/agent-card.json`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it("lists the machine's sessions as skills on the machine card", async () => {
    const card = (await (await fetch(`${mesh.gatewayUrl}/.well-known/agent-card.json`)).json()) as any;
    expect(card.skills.map((s: { id: string }) => s.id)).toContain('demo');
  });

  it('answers the card of an unknown session with 404', async () => {
    expect((await fetch(`${mesh.gatewayUrl}/a2a/ghost/.well-known/agent-card.json`)).status).toBe(404);
  });
});
