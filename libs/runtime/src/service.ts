import { Svcm, type Service, type ServiceMsg } from '@nats-io/services';
import { createInbox, headers as natsHeaders, type Msg, type NatsConnection } from '@nats-io/nats-core';
import { ShroomsError, fromWireError, toWireError, type WireError } from '@shrooms/protocol';
import type { Logger } from 'pino';
import { Answers } from './answers.js';
import { isNatsOutage, isPermissionViolation, natsUnavailable } from './retry.js';
import { SpanKind, contextFromTraceparent, inSpan, traceHeaders } from './telemetry.js';

export type { Service, ServiceMsg };

export interface ServiceSpec {
  name: string;
  version: string;
  description: string;
  metadata?: Record<string, string>;
  queue?: string;
}

/** Registers with the NATS services API so `nats micro ls|info|stats` see it. */
export function addService(nc: NatsConnection, spec: ServiceSpec): Promise<Service> {
  return new Svcm(nc).add({
    name: spec.name,
    version: spec.version,
    description: spec.description,
    metadata: spec.metadata,
    ...(spec.queue !== undefined ? { queue: spec.queue } : {}),
  });
}

/**
 * Resolves once nats-server has every subscription made so far on `nc` (a PING answered after
 * them). A service says it is ready only then: whoever hears so on another connection never meets
 * "no responders" from it. (The client sends its writes at the end of the event loop's turn, so a
 * subscription just made is not yet at the server.)
 */
export function subscriptionsTaken(nc: NatsConnection): Promise<void> {
  return nc.flush();
}

/**
 * What a `jsonEndpoint` handler returns to send no reply: only for a caller that asked for that
 * (`quietRequests`), which learns the outcome elsewhere (the ledger's watch, for a delivery).
 */
export const NO_REPLY: unique symbol = Symbol('no reply');

/**
 * As NO_REPLY, for a caller that passes over a later "taken" (quietRequests does): the request is
 * answered by `TAKEN`, later and together with others (answers.ts). nats-server 2.9 remembers every
 * reply-to subject it delivers to a user allowed to answer until it is answered or 5 s pass, and
 * walks them all at each further message once it holds over 4,096 — a bridge taking more than ~800
 * quiet deliveries a second cost it CPU per task.
 */
export const REPLY_TAKEN: unique symbol = Symbol('reply taken, later');

/** The later answer to a request its endpoint took without a reply (REPLY_TAKEN): no outcome, only "taken". */
const TAKEN = JSON.stringify({ ok: true, taken: true });

/**
 * A JSON endpoint: parses the request, runs `handle`, replies `{ ok: true, ...result }` or
 * `{ ok: false, error }` with the service error headers set (nothing when `handle` returns
 * NO_REPLY). Never throws into the subscription.
 * A handler that failed because NATS or JetStream did not answer (its own writes timed out: a
 * machine cut off, a stream without a leader) answers the retryable NATS_UNAVAILABLE, not INTERNAL.
 * Requests carry W3C trace context in their headers; each call runs in a span continuing it.
 */
export function jsonEndpoint<Req, Res extends object>(
  group: { addEndpoint: Service['addEndpoint'] },
  name: string,
  opts: { subject: string; queue?: string; metadata?: Record<string, string> },
  parse: (data: unknown) => Req,
  handle: (req: Req, msg: ServiceMsg) => Promise<Res | typeof NO_REPLY | typeof REPLY_TAKEN>,
  log: Logger,
): void {
  const later = new Answers();
  group.addEndpoint(name, {
    subject: opts.subject,
    ...(opts.queue !== undefined ? { queue: opts.queue } : {}),
    metadata: opts.metadata,
    handler: (err, msg) => {
      if (err) {
        log.error({ err, endpoint: name }, 'endpoint error');
        return;
      }
      void (async function serve() {
        try {
          const req = parse(msg.json());
          // Each call is a server span, a child of the caller's trace context from the NATS headers.
          const parent = contextFromTraceparent(msg.headers?.get('traceparent'), msg.headers?.get('tracestate'));
          const res = await inSpan(
            `${name} ${opts.subject.split('.').slice(0, 2).join('.')}`,
            { parent, kind: SpanKind.SERVER, attributes: { 'messaging.destination': opts.subject } },
            () => handle(req, msg),
          );
          if (res === NO_REPLY) return;
          if (res === REPLY_TAKEN) return later.add(() => msg.respond(TAKEN));
          msg.respond(JSON.stringify({ ok: true, ...res }));
        } catch (e) {
          const se = e instanceof ShroomsError ? e : asInvalidOrInternal(e);
          if (se.key === 'INTERNAL') log.error({ err: e, endpoint: name }, 'endpoint failed');
          msg.respondError(se.spec.code, se.message, JSON.stringify({ ok: false, error: toWireError(se) }));
        }
      })();
    },
  });
}

function asInvalidOrInternal(e: unknown): ShroomsError {
  if (isNatsOutage(e)) return natsUnavailable(`NATS or JetStream did not answer (${(e as Error).message}); retry later`);
  if (e && typeof e === 'object' && 'issues' in e)
    return new ShroomsError('INVALID_PARAMS', `bad request: ${(e as unknown as Error).message}`);
  if (e instanceof SyntaxError) return new ShroomsError('INVALID_PARAMS', 'request is not JSON');
  return new ShroomsError('INTERNAL', e instanceof Error ? e.message : String(e));
}

/**
 * The other side of `jsonEndpoint`: NATS request, reply parsed, errors rethrown as ShroomsError.
 * `unavailable` makes the error thrown when no answer comes; it is called only then (an error built
 * up front for every request costs its stack trace each time, on the send path twice).
 */
export async function requestJson<Res>(
  nc: NatsConnection,
  subject: string,
  body: unknown,
  opts: { timeoutMs: number; headers?: Record<string, string>; unavailable: () => ShroomsError },
): Promise<Res> {
  let reply;
  try {
    const h = natsHeaders();
    for (const [k, v] of Object.entries({ ...traceHeaders(), ...opts.headers })) h.set(k, v);
    reply = await nc.request(subject, JSON.stringify(body), { timeout: opts.timeoutMs, headers: h });
  } catch (err) {
    if (isPermissionViolation(err)) throw natsForbidden(subject);
    throw opts.unavailable();
  }
  return replyOf<Res>(reply, opts.unavailable);
}

/**
 * A request this process's NATS user may not send: a deployment's permissions (deploy/nats), not a
 * service that is away — said as such, so an operator is not sent looking for a part that runs.
 */
function natsForbidden(subject: string): ShroomsError {
  return new ShroomsError('ACTION_FORBIDDEN', `this process's NATS user may not send requests to ${subject} (NATS permissions)`, {
    action: 'nats_request',
    rule: "the NATS user's publish permissions (docs/security.md)",
  });
}

/** A reply's body when `ok`; the refusal it carries, or `unavailable()` for a bodiless status, thrown. */
function replyOf<Res>(m: Msg, unavailable: () => ShroomsError): Res & { ok: true } {
  // A status without a body is the server's: 503 when nobody serves the subject.
  if (m.data.length === 0) throw unavailable();
  const data = m.json<{ ok: boolean; error?: WireError } & Res>();
  if (!data.ok) throw fromWireError(data.error ?? { key: 'INTERNAL', message: 'no error in reply' });
  return data as Res & { ok: true };
}

/** `request` of `quietRequests`: the reply, or what `seen` resolved with first. */
export type QuietRequest = <Res, Seen>(
  subject: string,
  body: unknown,
  seen: Promise<Seen>,
  opts: { timeoutMs: number; unavailable: () => ShroomsError },
) => Promise<{ reply: Res } | { seen: Seen }>;

/**
 * Requests to endpoints that answer only when the caller would not learn the outcome otherwise
 * (their handler returns NO_REPLY or REPLY_TAKEN): each resolves with the reply or with what the caller's own
 * `seen` resolves with, whichever comes first. No reply and nothing seen within `timeoutMs`, or no
 * responder at all, throws `unavailable()` — as `requestJson` does. The endpoint's later "taken"
 * (REPLY_TAKEN) is not a reply: the caller goes on waiting for what it sees. One reply subscription on
 * `nc` serves every such request (a subscription each would cost two protocol writes).
 */
export function quietRequests(nc: NatsConnection, inboxPrefix?: string): { request: QuietRequest; close(): void } {
  const inbox = createInbox(inboxPrefix);
  const pending = new Map<string, (m: Msg) => void>();
  const sub = nc.subscribe(`${inbox}.*`, {
    callback: (_err, m) => pending.get(m.subject.slice(inbox.length + 1))?.(m),
  });
  let next = 0;
  const request: QuietRequest = (subject, body, seen, opts) => {
    const token = (next++).toString(36);
    return new Promise((resolve, reject) => {
      const done = () => {
        pending.delete(token);
        clearTimeout(timer);
      };
      const timer = setTimeout(() => (done(), reject(opts.unavailable())), opts.timeoutMs);
      pending.set(token, (m) => {
        let data: { ok: true; taken?: true };
        try {
          data = replyOf<{ taken?: true }>(m, opts.unavailable);
        } catch (err) {
          done();
          return reject(err as Error);
        }
        // The endpoint's later "taken" to a request it took quietly: no outcome, go on waiting.
        if (data.taken) return;
        done();
        resolve({ reply: data as never });
      });
      seen.then(
        (s) => {
          if (!pending.has(token)) return;
          done();
          resolve({ seen: s });
        },
        () => {},
      );
      const h = natsHeaders();
      for (const [k, v] of Object.entries(traceHeaders())) h.set(k, v);
      try {
        nc.publish(subject, JSON.stringify(body), { reply: `${inbox}.${token}`, headers: h });
      } catch {
        done();
        reject(opts.unavailable());
      }
    });
  };
  return { request, close: () => sub.unsubscribe() };
}
