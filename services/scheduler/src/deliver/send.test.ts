import { describe, expect, it } from 'vitest';
import { a2aSender, type OutgoingMessage } from './send.js';

const msg: OutgoingMessage = {
  machine: 'home',
  session: 'review',
  messageId: 'sched-x-20260501T080000Z',
  text: 'hi',
  metadata: { 'shrooms/schedule': 'x' },
};

function answering(status: number, body: unknown, seen: { url?: string; init?: RequestInit } = {}): typeof fetch {
  return (async (url: string, init: RequestInit) => {
    seen.url = url;
    seen.init = init;
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
  }) as unknown as typeof fetch;
}

describe('a2aSender', () => {
  it('sends a v1.0 SendMessage with returnImmediately and the derived message id', async () => {
    const seen: { url?: string; init?: RequestInit } = {};
    const send = a2aSender({
      timeoutMs: 1000,
      fetch: answering(200, { jsonrpc: '2.0', id: 1, result: { task: { id: 'review:sched-x-20260501T080000Z' } } }, seen),
    });
    expect(await send('http://gw', msg)).toEqual({ outcome: 'sent', taskId: 'review:sched-x-20260501T080000Z' });
    expect(seen.url).toBe('http://gw/a2a/review');
    expect(new Headers(seen.init!.headers).get('a2a-version')).toBe('1.0');
    const body = JSON.parse(String(seen.init!.body));
    expect(body).toMatchObject({
      method: 'SendMessage',
      params: {
        message: { messageId: msg.messageId, role: 'ROLE_USER', parts: [{ text: 'hi' }] },
        configuration: { returnImmediately: true },
      },
    });
  });

  it('treats a message id taken by another device as the task already there', async () => {
    const send = a2aSender({ timeoutMs: 1000, fetch: answering(409, { error: { code: -32058, message: 'taken' } }) });
    expect(await send('http://gw', msg)).toMatchObject({ outcome: 'existing' });
  });

  it('retries what the error table calls retryable and gives up on the rest', async () => {
    expect(
      await a2aSender({ timeoutMs: 1000, fetch: answering(503, { error: { code: -32055, message: 'guard away' } }) })('http://gw', msg),
    ).toMatchObject({
      outcome: 'retry',
      error: { key: 'GUARD_UNAVAILABLE' },
      retryAfterMs: 2000,
    });
    // The wait the gateway names in the error (ErrorInfo metadata `retryAfterSeconds`) is the one kept.
    const named = { code: -32050, message: 'window', data: [{ reason: 'LOOP_GUARD', metadata: { retryAfterSeconds: '17' } }] };
    expect(
      await a2aSender({ timeoutMs: 1000, fetch: answering(200, { jsonrpc: '2.0', id: 1, error: named }) })('http://gw', msg),
    ).toMatchObject({
      outcome: 'retry',
      error: { key: 'LOOP_GUARD' },
      retryAfterMs: 17_000,
    });
    expect(
      await a2aSender({ timeoutMs: 1000, fetch: answering(403, { error: { code: -32053, message: 'no' } }) })('http://gw', msg),
    ).toMatchObject({
      outcome: 'refused',
      error: { key: 'NOT_ALLOWED' },
    });
  });

  it('retries when the gateway cannot be reached or answers without JSON', async () => {
    const down = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    expect(await a2aSender({ timeoutMs: 1000, fetch: down })('http://gw', msg)).toMatchObject({
      outcome: 'retry',
      error: { key: 'GATEWAY_UNREACHABLE' },
    });
    expect(await a2aSender({ timeoutMs: 1000, fetch: down })('http://gw', msg)).not.toHaveProperty('retryAfterMs');
    expect(await a2aSender({ timeoutMs: 1000, fetch: answering(502, 'Bad Gateway') })('http://gw', msg)).toMatchObject({
      outcome: 'retry',
    });
  });
});
