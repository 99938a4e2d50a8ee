/**
 * Errors the client raises. Wire errors (JSON-RPC / HTTP+JSON answers from a gateway, NATS replies
 * from the scheduler) become `ShroomsError` with the key from the one table in @shrooms/protocol;
 * not reaching a gateway at all is a local error of its own, because there is no wire code for it.
 */
import { ERRORS, ShroomsError, errorByCode, type ErrorKey } from '@shrooms/protocol';

/** The gateway did not answer at the transport level (refused, reset, DNS, timeout). */
export class GatewayUnreachableError extends Error {
  readonly retryable = true;
  constructor(
    readonly url: string,
    readonly cause?: unknown,
    /** The task (`MACHINE/SESSION:ID`) that exists already, when the error came while following it. */
    readonly task?: string,
  ) {
    super(
      `cannot reach the gateway at ${url} — is \`shrooms-agent up\` running? (set SHROOMS_GATEWAY_URL if it listens elsewhere)` +
        (task ? followHint(task) : ''),
    );
    this.name = 'GatewayUnreachableError';
  }
}

/** Said after an error once a task exists, so that nobody asks again (a fresh message id is a second task). */
function followHint(task: string): string {
  return `; the task ${task} exists: follow it with task_status or \`shrooms-agent a2a get ${task}\` rather than asking again`;
}

/**
 * The error with the task it happened to named (same class, key and retryability): for errors after
 * the task was created, whose retry must follow that task, not create another.
 */
export function namingTask(err: unknown, task: string): unknown {
  if (err instanceof GatewayUnreachableError) return err.task ? err : new GatewayUnreachableError(err.url, err.cause, task);
  if (err instanceof ShroomsError) {
    if (err.details.task !== undefined) return err;
    return new ShroomsError(err.key, err.message + followHint(task), { ...err.details, task });
  }
  if (err instanceof Error && !isAbort(err)) err.message += followHint(task);
  return err;
}

export function isGatewayUnreachable(e: unknown): e is GatewayUnreachableError {
  return e instanceof GatewayUnreachableError;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** True for what `fetch` throws when nothing answered (`TypeError: fetch failed` with a cause). */
export function isNetworkError(e: unknown): boolean {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (cur instanceof TypeError && cur.message === 'fetch failed') return true;
  }
  return false;
}

function isAbort(e: unknown): boolean {
  return (e as { name?: string } | null)?.name === 'AbortError' || (e as { name?: string } | null)?.name === 'TimeoutError';
}

function keyByReason(reason: unknown): ErrorKey | undefined {
  if (typeof reason !== 'string') return undefined;
  return (Object.keys(ERRORS) as ErrorKey[]).find((k) => ERRORS[k].reason === reason);
}

/** `google.rpc.ErrorInfo.metadata` from a JSON-RPC `error.data` array or a REST `details` array. */
function detailsOf(data: unknown): Record<string, string> {
  const list = Array.isArray(data) ? data : [];
  for (const d of list) {
    const md = (d as { metadata?: unknown } | null)?.metadata;
    if (md && typeof md === 'object') return Object.fromEntries(Object.entries(md).map(([k, v]) => [k, String(v)]));
  }
  return {};
}

function reasonOf(data: unknown): string | undefined {
  const list = Array.isArray(data) ? data : [];
  for (const d of list) {
    const r = (d as { reason?: unknown } | null)?.reason;
    if (typeof r === 'string') return r;
  }
  return undefined;
}

/** A JSON-RPC `error` member as a ShroomsError (unknown codes stay visible in the message). */
export function fromJsonRpcError(err: { code?: unknown; message?: unknown; data?: unknown }): ShroomsError {
  const code = typeof err.code === 'number' ? err.code : undefined;
  const key = (code !== undefined ? errorByCode(code) : undefined) ?? keyByReason(reasonOf(err.data));
  const message = typeof err.message === 'string' ? err.message : 'error without a message';
  if (!key) return new ShroomsError('INTERNAL', `${message} (code ${code ?? 'none'})`);
  return new ShroomsError(key, message, detailsOf(err.data));
}

/**
 * Turns whatever a call threw into the error the client raises: ShroomsError for answers,
 * GatewayUnreachableError when nothing answered, abort errors unchanged.
 */
export function normalizeError(e: unknown, url: string): Error {
  if (e instanceof ShroomsError || e instanceof GatewayUnreachableError) return e;
  if (isAbort(e)) return e as Error;
  if (isNetworkError(e)) return new GatewayUnreachableError(url, e);
  const any = e as { envelopeCode?: unknown; data?: unknown; reason?: unknown; message?: unknown; statusCode?: unknown } | null;
  if (any && typeof any.envelopeCode === 'number')
    return fromJsonRpcError({ code: any.envelopeCode, message: any.message, data: any.data });
  const key = keyByReason(any?.reason);
  if (key && key !== 'INTERNAL') return new ShroomsError(key, String(any?.message ?? key));
  const msg = e instanceof Error ? e.message : String(e);
  // The SDK reports non-JSON or non-2xx answers as plain errors: a gateway that is not ours, or a proxy.
  return new ShroomsError('INVALID_AGENT_RESPONSE', `unexpected answer from ${url}: ${msg.slice(0, 300)}`);
}
