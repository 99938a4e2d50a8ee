import { Svcm, type Service, type ServiceMsg } from '@nats-io/services';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { ShroomsError, fromWireError, toWireError, type WireError } from '@shrooms/protocol';
import type { Logger } from 'pino';
import { isNatsOutage } from './retry.js';
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
 * A JSON endpoint: parses the request, runs `handle`, replies `{ ok: true, ...result }` or
 * `{ ok: false, error }` with the service error headers set. Never throws into the subscription.
 * A handler that failed because NATS or JetStream did not answer (its own writes timed out: a
 * machine cut off, a stream without a leader) answers the retryable NATS_UNAVAILABLE, not INTERNAL.
 * Requests carry W3C trace context in their headers; each call runs in a span continuing it.
 */
export function jsonEndpoint<Req, Res extends object>(
  group: { addEndpoint: Service['addEndpoint'] },
  name: string,
  opts: { subject: string; queue?: string; metadata?: Record<string, string> },
  parse: (data: unknown) => Req,
  handle: (req: Req, msg: ServiceMsg) => Promise<Res>,
  log: Logger,
): void {
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
  if (isNatsOutage(e))
    return new ShroomsError('NATS_UNAVAILABLE', `NATS or JetStream did not answer (${(e as Error).message}); retry later`);
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
  } catch {
    throw opts.unavailable();
  }
  const data = reply.json<{ ok: boolean; error?: WireError } & Res>();
  if (!data.ok) throw fromWireError(data.error ?? { key: 'INTERNAL', message: 'no error in reply' });
  return data;
}
