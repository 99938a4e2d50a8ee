/**
 * One occurrence for one recipient, sent the way any client asks for a task: an A2A v1.0
 * `SendMessage` (JSON-RPC, `A2A-Version: 1.0`, `returnImmediately`) to the gateway that serves the
 * recipient's machine. So the guard, the ledger and the bridge treat it as an ordinary task, and
 * the derived message id makes every resend of the occurrence the same task.
 */
import { randomUUID } from 'node:crypto';
import { ERRORS, META, errorByCode, type Metadata } from '@shrooms/protocol';
import { SpanKind, inSpan, traceHeaders } from '@shrooms/runtime';

export interface OutgoingMessage {
  machine: string;
  session: string;
  messageId: string;
  text: string;
  metadata: Metadata;
}

export type SendResult =
  /** The gateway answered with the task (new, or the existing one for a resend). */
  | { outcome: 'sent'; taskId: string }
  /** The message id already names a task asked by another device: another replica's send. */
  | { outcome: 'existing'; taskId: string }
  /** The gateway refused for good (not allowed, no such session, …). */
  | { outcome: 'refused'; error: { key: string; message: string } }
  /** It may work later (gateway down, guard unavailable, loop guard window). */
  | { outcome: 'retry'; error: { key: string; message: string } };

export type SendMessage = (url: string, msg: OutgoingMessage) => Promise<SendResult>;

export function a2aSender(opts: { timeoutMs: number; fetch?: typeof fetch }): SendMessage {
  const doFetch = opts.fetch ?? fetch;
  return function sendA2A(url, msg) {
    // Each send is the root of the task's trace (a schedule is a chain root): gateway, guard,
    // bridge and the worker's own asks join it through the traceparent header.
    const attributes = {
      'shrooms.schedule': String(msg.metadata[META.schedule] ?? ''),
      'shrooms.occurrence': String(msg.metadata[META.occurrence] ?? ''),
      'shrooms.agent': `${msg.machine}/${msg.session}`,
      'shrooms.message_id': msg.messageId,
    };
    return inSpan('scheduler send occurrence', { kind: SpanKind.CLIENT, attributes }, async (span, ctx) => {
      const result = await post(url, msg, traceHeaders(ctx));
      span.setAttribute('shrooms.outcome', result.outcome);
      return result;
    });
  };

  async function post(url: string, msg: OutgoingMessage, trace: Record<string, string>): Promise<SendResult> {
    const body = {
      jsonrpc: '2.0',
      id: randomUUID(),
      method: 'SendMessage',
      params: {
        message: { messageId: msg.messageId, role: 'ROLE_USER', parts: [{ text: msg.text }], metadata: msg.metadata },
        configuration: { returnImmediately: true },
        metadata: msg.metadata,
      },
    };
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${url}/a2a/${encodeURIComponent(msg.session)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...trace },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      return { outcome: 'retry', error: { key: 'GATEWAY_UNREACHABLE', message: `${url}: ${(err as Error).message}` } };
    }
    let reply: { result?: { task?: { id?: string }; id?: string }; error?: { code?: number; message?: string } };
    try {
      reply = JSON.parse(text) as typeof reply;
    } catch {
      return { outcome: 'retry', error: { key: 'GATEWAY_UNREACHABLE', message: `${url} answered HTTP ${res.status} without JSON` } };
    }
    if (reply.error) {
      const key = typeof reply.error.code === 'number' ? errorByCode(reply.error.code) : undefined;
      const error = { key: key ?? `CODE_${reply.error.code}`, message: reply.error.message ?? '' };
      if (key === 'MESSAGE_ID_CONFLICT') return { outcome: 'existing', taskId: `${msg.session}:${msg.messageId}` };
      const retryable = key ? ERRORS[key].retryable : res.status >= 500;
      return { outcome: retryable ? 'retry' : 'refused', error };
    }
    const taskId = reply.result?.task?.id ?? reply.result?.id;
    if (typeof taskId !== 'string')
      return { outcome: 'retry', error: { key: 'INVALID_AGENT_RESPONSE', message: `${url} answered without a task` } };
    return { outcome: 'sent', taskId };
  }
}
