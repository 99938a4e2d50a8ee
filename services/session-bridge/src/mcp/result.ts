/**
 * Tool results: short text a model reads first, `structuredContent` for programs. Failures are tool
 * errors (`isError`) whose text starts with the error's key, with the key, code and retryability in
 * `_meta["shrooms/error"]` for programs.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GatewayUnreachableError } from '@shrooms/client';
import { ShroomsError } from '@shrooms/protocol';

export function ok(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

export function fail(err: unknown): CallToolResult {
  let key = 'INTERNAL';
  let code: number | undefined;
  let retryable = false;
  let message = err instanceof Error ? err.message : String(err);
  if (err instanceof ShroomsError) {
    key = err.key;
    code = err.spec.code;
    retryable = err.retryable;
  } else if (err instanceof GatewayUnreachableError) {
    key = 'GATEWAY_UNREACHABLE';
    retryable = true;
  } else if ((err as { name?: string } | null)?.name === 'AbortError') {
    key = 'CANCELLED';
    message = 'the call was cancelled';
  }
  return {
    content: [{ type: 'text', text: `${key}: ${message}` }],
    isError: true,
    _meta: { 'shrooms/error': { key, ...(code !== undefined ? { code } : {}), retryable, message } },
  };
}

/** Runs a tool body; whatever it throws becomes a tool error the model can read. */
export async function tool(fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await fn();
  } catch (err) {
    return fail(err);
  }
}
