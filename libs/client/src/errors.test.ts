import { ShroomsError } from '@shrooms/protocol';
import { describe, expect, it } from 'vitest';
import { GatewayUnreachableError, fromJsonRpcError, namingTask, normalizeError } from './errors.js';

describe('errors from the wire', () => {
  it('maps a JSON-RPC code of the table to its key, with the ErrorInfo metadata', () => {
    const e = fromJsonRpcError({
      code: -32050,
      message: 'slow down',
      data: [{ '@type': 'x', reason: 'LOOP_GUARD', metadata: { retryAfterSeconds: '60' } }],
    });
    expect(e.key).toBe('LOOP_GUARD');
    expect(e.details).toEqual({ retryAfterSeconds: '60', setting: 'GUARD_RATE_MAX' });
    expect(e.retryable).toBe(true);
  });

  it('keeps an unknown code visible in the message', () => {
    const e = fromJsonRpcError({ code: -39999, message: 'odd' });
    expect(e.key).toBe('INTERNAL');
    expect(e.message).toMatch(/-39999/);
  });

  it('maps the SDK errors (envelopeCode) and a refused connection', () => {
    const sdk = Object.assign(new Error('no task'), { envelopeCode: -32001, data: [] });
    expect((normalizeError(sdk, 'http://gw') as ShroomsError).key).toBe('TASK_NOT_FOUND');
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    const un = normalizeError(refused, 'http://127.0.0.1:1');
    expect(un).toBeInstanceOf(GatewayUnreachableError);
    expect(un.message).toBe(
      'cannot reach the gateway at http://127.0.0.1:1 — is `shrooms-agent up` running? (set SHROOMS_GATEWAY_URL if it listens elsewhere)',
    );
  });
});

describe('errors after a task exists', () => {
  const follow =
    'the task box/demo:cli-1 exists: follow it with task_status or `shrooms-agent a2a get box/demo:cli-1` rather than asking again';

  it('names the task in an unreachable gateway, still retryable', () => {
    const e = namingTask(new GatewayUnreachableError('http://gw'), 'box/demo:cli-1') as GatewayUnreachableError;
    expect(e).toBeInstanceOf(GatewayUnreachableError);
    expect(e.retryable).toBe(true);
    expect(e.task).toBe('box/demo:cli-1');
    expect(e.message).toContain(follow);
  });

  it('names the task in a wire error and keeps its key', () => {
    const e = namingTask(new ShroomsError('NATS_UNAVAILABLE', 'NATS is away'), 'box/demo:cli-1') as ShroomsError;
    expect(e).toBeInstanceOf(ShroomsError);
    expect(e.key).toBe('NATS_UNAVAILABLE');
    expect(e.details.task).toBe('box/demo:cli-1');
    expect(e.message).toBe(`NATS is away; ${follow}`);
  });
});
