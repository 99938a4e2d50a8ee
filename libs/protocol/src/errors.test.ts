import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS, ShroomsError, fromWireError, toJsonRpcError, toRestError, toWireError } from './errors.js';

/** The README's table of our codes, made from the one table. */
export function errorsMarkdown(): string {
  const rows = Object.values(ERRORS)
    .filter((e) => e.code <= -32050 && e.code >= -32099)
    .map((e) => `| ${e.code} | ${e.reason} | ${e.http} | ${e.retryable ? 'yes' : 'no'} | ${e.doc} |`);
  return ['| code | reason | HTTP | retry | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

describe('the error table', () => {
  it('matches the table documented in the README', () => {
    const readme = readFileSync(join(import.meta.dirname, '..', '..', '..', 'README.md'), 'utf8');
    const block = readme.split('<!-- errors:begin -->\n')[1]?.split('\n<!-- errors:end -->')[0];
    expect(block).toBe(errorsMarkdown());
  });

  it('gives every entry a distinct reason and A2A codes their spec numbers', () => {
    const reasons = Object.values(ERRORS).map((e) => e.reason);
    expect(new Set(reasons).size).toBe(reasons.length);
    expect(ERRORS.TASK_NOT_FOUND.code).toBe(-32001);
    expect(ERRORS.VERSION_NOT_SUPPORTED.code).toBe(-32009);
    expect(ERRORS.LOOP_GUARD.code).toBe(-32050);
  });

  it('maps one error to its JSON-RPC and REST forms with the ErrorInfo entry', () => {
    const err = new ShroomsError('LOOP_GUARD', 'slow down', { retryAfterSeconds: 12 });
    expect(toJsonRpcError(err)).toEqual({
      code: -32050,
      message: 'slow down (raise it with GUARD_RATE_MAX)',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'LOOP_GUARD',
          domain: 'shrooms.mesh',
          metadata: { retryAfterSeconds: '12', setting: 'GUARD_RATE_MAX' },
        },
      ],
    });
    expect(toRestError(err).error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(err.retryable).toBe(true);
    expect(fromWireError(toWireError(err))).toMatchObject({ key: 'LOOP_GUARD', message: 'slow down (raise it with GUARD_RATE_MAX)' });
  });

  it('names the setting that raises a limit once, and a wait for every retryable error', () => {
    const err = new ShroomsError('LIMIT_EXCEEDED', 'message text is 70000 bytes', { limit: 'textBytes', max: 65536 });
    expect(err.message).toBe('message text is 70000 bytes (raise it with LIMIT_TEXT_BYTES)');
    expect(fromWireError(toWireError(err)).message).toBe(err.message);
    expect(err.retryAfterSeconds).toBeUndefined();
    expect(new ShroomsError('BRIDGE_UNAVAILABLE', 'x').retryAfterSeconds).toBe(5);
    expect(new ShroomsError('LOOP_GUARD', 'x', { retryAfterSeconds: 0.2 }).retryAfterSeconds).toBe(1);
  });
});
