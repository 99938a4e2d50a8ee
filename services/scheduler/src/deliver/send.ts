/**
 * One occurrence for one recipient, sent the way any client asks for a task: an A2A v1.0
 * `SendMessage` (JSON-RPC, `A2A-Version: 1.0`, `returnImmediately`) to the gateway that serves the
 * recipient's machine, through the client's wire (libs/client), which reads its answers and errors. So the guard, the ledger and the bridge treat it as an ordinary task, and
 * the derived message id makes every resend of the occurrence the same task.
 */
import { GatewayWire } from '@shrooms/client';
import { ERRORS, META, ShroomsError, type Metadata } from '@shrooms/protocol';
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
  /**
   * It may work later (gateway down, guard unavailable, loop guard window). `retryAfterMs`: the wait
   * the gateway asked for (its `retryAfterSeconds` / Retry-After) when it answered at all.
   */
  | { outcome: 'retry'; error: { key: string; message: string }; retryAfterMs?: number };

export type SendMessage = (url: string, msg: OutgoingMessage) => Promise<SendResult>;

export function a2aSender(opts: { timeoutMs: number; fetch?: typeof fetch }): SendMessage {
  const wire = new GatewayWire({ fetch: opts.fetch, requestTimeoutMs: opts.timeoutMs });
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
    const params = {
      message: { messageId: msg.messageId, role: 'ROLE_USER', parts: [{ text: msg.text }], metadata: msg.metadata },
      configuration: { returnImmediately: true },
      metadata: msg.metadata,
    };
    let result: { task?: { id?: string }; id?: string } | undefined;
    try {
      result = (await wire.rpc(url, msg.session, 'SendMessage', params, trace)) as typeof result;
    } catch (err) {
      if (!(err instanceof ShroomsError)) {
        return { outcome: 'retry', error: { key: 'GATEWAY_UNREACHABLE', message: `${url}: ${(err as Error).message}` } };
      }
      const error = { key: err.key, message: err.message };
      if (err.key === 'MESSAGE_ID_CONFLICT') return { outcome: 'existing', taskId: `${msg.session}:${msg.messageId}` };
      // Not an answer of a gateway of ours (a proxy's page, no JSON): it may be back later.
      if (err.key === 'INVALID_AGENT_RESPONSE') return { outcome: 'retry', error };
      if (!ERRORS[err.key].retryable) return { outcome: 'refused', error };
      return { outcome: 'retry', error, retryAfterMs: (err.retryAfterSeconds ?? 1) * 1000 };
    }
    const taskId = result?.task?.id ?? result?.id;
    if (typeof taskId !== 'string')
      return { outcome: 'retry', error: { key: 'INVALID_AGENT_RESPONSE', message: `${url} answered without a task` } };
    return { outcome: 'sent', taskId };
  }
}
