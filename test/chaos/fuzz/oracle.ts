/**
 * Judges one answer to a fuzz case against the one error table (libs/protocol errors.ts):
 *
 * - JSON-RPC binding: HTTP 200, `{"jsonrpc":"2.0","id":…,"error":{code,message,data:[ErrorInfo]}}`,
 *   the code in the table, the ErrorInfo's reason and domain the table's for that code, the id the
 *   request's (or null when the request could not be read);
 * - HTTP+JSON binding (and anything the HTTP layer refuses): a 4xx `google.rpc.Status` whose code is
 *   the HTTP status and whose status name, reason and domain are the table's;
 * - never a 5xx, never a success, never silence (a timeout is a hang).
 */
import { ERRORS, ERROR_DOMAIN, SHROOMS_ERROR_DOMAIN, errorByCode, type ErrorKey } from '@shrooms/protocol';
import type { RawResponse } from '@shrooms/testing';
import type { FuzzCase, Outcome } from './cases.js';

export interface Verdict {
  /** Histogram key: `rpc -32601 METHOD_NOT_FOUND`, `rest 404 TASK_NOT_FOUND`, `closed`, `hang`. */
  outcome: string;
  status?: number;
  problem?: string;
  fiveXX: boolean;
  hang: boolean;
  accepted: boolean;
}

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const domainOf = (code: number) => (code <= -32050 && code >= -32099 ? SHROOMS_ERROR_DOMAIN : ERROR_DOMAIN);
const keyByReason = new Map<string, ErrorKey>((Object.keys(ERRORS) as ErrorKey[]).map((k) => [ERRORS[k].reason, k]));

/** What the HTTP layer may answer for a request it cannot read (or a route nobody serves). */
function allowed(expect: Outcome[] | undefined, key: ErrorKey | 'ROUTE_NOT_FOUND' | 'closed'): boolean {
  if (!expect) return key !== 'INTERNAL' && key !== 'INVALID_AGENT_RESPONSE';
  if ((expect as string[]).includes(key)) return true;
  return expect.includes('HTTP_LAYER') && (key === 'INVALID_REQUEST' || key === 'LIMIT_EXCEEDED' || key === 'ROUTE_NOT_FOUND');
}

function errorInfoProblem(info: unknown, key: ErrorKey): string | undefined {
  const i = info as Record<string, unknown> | undefined;
  if (!i || i['@type'] !== ERROR_INFO) return `details[0] is not an ErrorInfo: ${JSON.stringify(info)?.slice(0, 120)}`;
  if (i.reason !== ERRORS[key].reason) return `ErrorInfo reason ${String(i.reason)} is not ${ERRORS[key].reason}`;
  if (i.domain !== domainOf(ERRORS[key].code)) return `ErrorInfo domain ${String(i.domain)} is not ${domainOf(ERRORS[key].code)}`;
  return undefined;
}

export function judge(c: FuzzCase, r: RawResponse): Verdict {
  const v = (outcome: string, problem?: string, extra: Partial<Verdict> = {}): Verdict => ({
    outcome,
    fiveXX: false,
    hang: false,
    accepted: false,
    ...(r.status !== undefined ? { status: r.status } : {}),
    ...(problem ? { problem } : {}),
    ...extra,
  });
  if (r.timedOut) return v('hang', 'no answer within the bound', { hang: true });
  if (r.stream) return v(`stream ${r.status}`, 'opened an event stream', { accepted: true });
  if (r.status === undefined)
    return v('closed', allowed(c.expect, 'closed') ? undefined : `connection closed without an answer (${r.error ?? ''})`);
  if (r.status >= 500) return v(`${c.binding} ${r.status}`, `HTTP ${r.status}: ${r.body.toString('utf8').slice(0, 200)}`, { fiveXX: true });

  let body: Record<string, any>;
  try {
    body = JSON.parse(r.body.toString('utf8')) as Record<string, any>;
  } catch {
    return v(`${c.binding} ${r.status} non-JSON`, `body is not JSON: ${JSON.stringify(r.body.toString('latin1').slice(0, 120))}`);
  }

  if (r.status === 200 && body && typeof body === 'object' && 'jsonrpc' in body) {
    if (body.jsonrpc !== '2.0') return v('rpc ?', `jsonrpc is ${JSON.stringify(body.jsonrpc)}`);
    if ('result' in body) return v('rpc result', `accepted: ${JSON.stringify(body.result).slice(0, 160)}`, { accepted: true });
    const e = body.error as Record<string, any> | undefined;
    if (!e || typeof e.code !== 'number') return v('rpc ?', `no error object: ${JSON.stringify(body).slice(0, 160)}`);
    const key = errorByCode(e.code);
    const outcome = `rpc ${e.code} ${key ?? '?'}`;
    if (!key) return v(outcome, `code ${e.code} is not in the error table`);
    if (typeof e.message !== 'string' || !e.message) return v(outcome, 'error.message is missing');
    if (!Array.isArray(e.data)) return v(outcome, 'error.data is not an array');
    const infoProblem = errorInfoProblem(e.data[0], key);
    if (infoProblem) return v(outcome, infoProblem);
    if (c.binding !== 'rpc') return v(outcome, 'a JSON-RPC answer on the HTTP+JSON binding');
    // The id is the request's, or null when the request could not be read (parse error, bad envelope, body too large, refused at the door).
    const unreadable =
      key === 'PARSE_ERROR' ||
      key === 'INVALID_REQUEST' ||
      key === 'CROSS_SITE_REFUSED' || // refused at the door, before the body is read
      key === 'CONTENT_TYPE_NOT_SUPPORTED' || // the same, for a client that is no browser page
      (key === 'LIMIT_EXCEEDED' && e.data[0]?.metadata?.limit === 'bodyBytes');
    if (!('id' in body)) return v(outcome, 'the answer has no id');
    if (c.id !== undefined && !Object.is(body.id, c.id) && !(body.id === c.id) && !(unreadable && body.id === null))
      return v(outcome, `id ${JSON.stringify(body.id)?.slice(0, 40)} is not ${JSON.stringify(c.id)?.slice(0, 40)}`);
    if (!allowed(c.expect, key)) return v(outcome, `expected ${c.expect?.join('|') ?? 'a table error'}, got ${key}`);
    return v(outcome);
  }

  if (r.status < 400)
    return v(`${c.binding} ${r.status}`, `accepted with HTTP ${r.status}: ${r.body.toString('utf8').slice(0, 160)}`, { accepted: true });
  const err = body?.error as Record<string, any> | undefined;
  if (!err || typeof err !== 'object') return v(`rest ${r.status} ?`, `not a google.rpc.Status: ${JSON.stringify(body).slice(0, 160)}`);
  const info = Array.isArray(err.details) ? (err.details[0] as Record<string, any> | undefined) : undefined;
  const reason = String(info?.reason ?? '?');
  const outcome = `rest ${r.status} ${reason}`;
  if (err.code !== r.status) return v(outcome, `error.code ${err.code} is not the HTTP status ${r.status}`);
  if (typeof err.status !== 'string' || typeof err.message !== 'string' || !err.message)
    return v(outcome, 'error.status or error.message missing');
  if (reason === 'NOT_FOUND' && r.status === 404 && err.status === 'NOT_FOUND') {
    return v(outcome, allowed(c.expect, 'ROUTE_NOT_FOUND') ? undefined : `expected ${c.expect?.join('|')}, got a route miss`);
  }
  const key = keyByReason.get(reason);
  if (!key) return v(outcome, `reason ${reason} is not in the error table`);
  const infoProblem = errorInfoProblem(info, key);
  if (infoProblem) return v(outcome, infoProblem);
  const headerLimit = key === 'LIMIT_EXCEEDED' && r.status === 431 && info?.metadata?.limit === 'headerBytes';
  if (ERRORS[key].http !== r.status && !headerLimit) return v(outcome, `${key} should be HTTP ${ERRORS[key].http}, was ${r.status}`);
  if (ERRORS[key].status !== err.status) return v(outcome, `${key} should have status ${ERRORS[key].status}, had ${err.status}`);
  // A request the HTTP layer refused may be answered in the HTTP+JSON shape whatever its path.
  if (c.binding === 'rpc' && !(c.expect?.includes('HTTP_LAYER') || c.expect?.includes('ROUTE_NOT_FOUND'))) {
    return v(outcome, 'a google.rpc.Status answer on the JSON-RPC binding');
  }
  if (!allowed(c.expect, key)) return v(outcome, `expected ${c.expect?.join('|') ?? 'a table error'}, got ${key}`);
  return v(outcome);
}
