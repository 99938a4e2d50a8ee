/**
 * NATS_UNAVAILABLE through a live gateway (processes started by the CLI, a real nats-server): the
 * server is killed (SIGKILL) while a blocking SendMessage is in flight, and the client is answered
 * -32066, retryable, with Retry-After — not an internal error, and not left waiting for the ten
 * minutes a blocking send may last. A request that arrives while the server is away is answered the
 * same way, on both bindings; when the server is back, the same message again follows the same task.
 * Streams already open (SendStreamingMessage, SubscribeToTask, both bindings) end with the same
 * error event instead of heartbeats on a stream that can bring nothing more.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startMesh, type Mesh } from '@shrooms/testing';

let mesh: Mesh;

beforeAll(async () => {
  // A file-backed JetStream folder: the task asked before the kill is there after the restart.
  mesh = await startMesh({ sessions: [{ name: 'worker' }] });
}, 180_000);

afterAll(async () => {
  await mesh?.stop();
});

const a2a = () => `${mesh.gatewayUrl}/a2a/worker`;

async function post(body: unknown): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const res = await fetch(a2a(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

const send = (messageId: string, text: string, configuration: Record<string, unknown> = {}) =>
  post({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: { message: { messageId, role: 'ROLE_USER', parts: [{ text }] }, configuration },
  });

function expectUnavailable(r: { retryAfter: string | null; body: any }, what: string) {
  expect(r.body.error?.code, `${what}: ${JSON.stringify(r.body)}`).toBe(-32066);
  expect(r.body.error.data[0].reason, what).toBe('NATS_UNAVAILABLE');
  expect(Number(r.retryAfter), what).toBeGreaterThan(0);
}

/** Opens an SSE stream; `frames()` resolves with every `data:` frame once the gateway ends it. */
async function openStream(path: string, init: { method: string; body?: unknown }) {
  const res = await fetch(`${mesh.gatewayUrl}${path}`, {
    method: init.method,
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', accept: 'text/event-stream' },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  if (!res.headers.get('content-type')?.includes('text/event-stream')) throw new Error(`${path}: no stream: ${await res.text()}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const frames = () => text.split('\n\n').flatMap((f) => (f.startsWith('data: ') ? [JSON.parse(f.slice(6))] : []));
  // The first frame (the task) is there before the stream counts as open.
  while (frames().length === 0) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return {
    first: frames()[0],
    async ended(): Promise<any[]> {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return frames();
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

const streamingSend = (messageId: string) => ({ message: { messageId, role: 'ROLE_USER', parts: [{ text: 'quiet: thinking' }] } });

describe('a gateway whose nats-server disappears', () => {
  it('answers a blocking SendMessage in flight NATS_UNAVAILABLE with Retry-After, then follows the same task when it is back', async () => {
    // `quiet:` makes the echo worker end its turn without finishing the task: the send blocks.
    const inFlight = send('m-quiet', 'quiet: thinking');
    await eventually(async () => {
      const r = await post({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'worker:m-quiet' } });
      return r.body.result?.status?.state === 'TASK_STATE_WORKING';
    }, 30_000);

    mesh.nats.kill();
    const answered = await inFlight;
    expectUnavailable(answered, 'the blocking send in flight');
    expect(answered.body.error.message).toContain('worker:m-quiet');

    // While it is away, a new request gets the same answer on both bindings.
    expectUnavailable(await post({ jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: 'worker:m-quiet' } }), 'GetTask');
    const rest = await fetch(`${a2a()}/tasks/worker:m-quiet`, { headers: { 'A2A-Version': '1.0' } });
    expect(rest.status).toBe(503);
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await rest.json()) as any).error.details[0].reason).toBe('NATS_UNAVAILABLE');

    // Back: the same message again is the same task, still open (nothing was lost or doubled).
    await mesh.nats.restart();
    await eventually(async () => {
      const again = await send('m-quiet', 'quiet: thinking', { returnImmediately: true });
      expect(again.body.result?.task?.id, JSON.stringify(again.body)).toBe('worker:m-quiet');
      expect(again.body.result.task.status.state).toBe('TASK_STATE_WORKING');
      return true;
    }, 60_000);
    // A bound far below the ten minutes a blocking send may wait: reaching it means the gateway hung.
  }, 60_000);

  it('ends every open stream, on both bindings, with a NATS_UNAVAILABLE error event', async () => {
    const rpc = (method: string, params: unknown) => ({ method: 'POST', body: { jsonrpc: '2.0', id: 7, method, params } });
    const streams = {
      'JSON-RPC SendStreamingMessage': await openStream('/a2a/worker', rpc('SendStreamingMessage', streamingSend('m-s1'))),
      'HTTP+JSON SendStreamingMessage': await openStream('/a2a/worker/message:stream', { method: 'POST', body: streamingSend('m-s2') }),
      'JSON-RPC SubscribeToTask': await openStream('/a2a/worker', rpc('SubscribeToTask', { id: 'worker:m-s1' })),
      'HTTP+JSON SubscribeToTask': await openStream('/a2a/worker/tasks/worker:m-s2:subscribe', { method: 'GET' }),
    };
    for (const [what, s] of Object.entries(streams)) expect(s.first, what).toBeTruthy();

    mesh.nats.kill();
    for (const [what, s] of Object.entries(streams)) {
      const last = (await s.ended()).at(-1);
      const info = what.startsWith('JSON-RPC') ? last.error?.data?.[0] : last.error?.details?.[0];
      expect(info?.reason, `${what}: ${JSON.stringify(last)}`).toBe('NATS_UNAVAILABLE');
      if (what.startsWith('JSON-RPC')) expect(last.error.code, what).toBe(-32066);
      else expect(last.error.code, what).toBe(503);
    }
    await mesh.nats.restart();
  }, 60_000);
});
