/**
 * OpenTelemetry (spec §10). Configured only by the standard `OTEL_*` variables: with no exporter
 * endpoint set, nothing is installed and the API's no-op tracer costs next to nothing. W3C trace
 * context travels in HTTP headers, NATS message headers and task metadata (`shrooms/traceparent`).
 * A malformed `traceparent` is ignored (a new trace starts), never joined or thrown on. The SDK
 * (provider, exporter: a few hundred modules, ~10 MB resident) is loaded only when configured.
 */
import { context, propagation, trace, SpanKind, SpanStatusCode, type Context, type Span, type Attributes } from '@opentelemetry/api';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { W3CPropagator } from './w3c.js';

export { SpanKind, SpanStatusCode, context, trace, type Context, type Span, type Attributes };

let provider: NodeTracerProvider | undefined;

/** True when an OTLP endpoint is configured and traces are not switched off. */
export function tracingConfigured(env: Record<string, string | undefined> = process.env): boolean {
  if ((env.OTEL_TRACES_EXPORTER ?? '').split(',').includes('none') || env.OTEL_SDK_DISABLED === 'true') return false;
  return !!(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Installs the tracer provider once per process when configured (loading the SDK then); resolves
 * with a shutdown that flushes.
 */
export async function initTelemetry(
  serviceName: string,
  env: Record<string, string | undefined> = process.env,
): Promise<() => Promise<void>> {
  propagation.setGlobalPropagator(new W3CPropagator());
  if (provider || !tracingConfigured(env)) return async () => {};
  const p = (provider = (await import('./telemetry-sdk.js')).tracerProvider(serviceName, env));
  return async () => {
    await p.shutdown().catch(() => {});
  };
}

export const tracer = () => trace.getTracer('shrooms');

/** Exports what is buffered (called on shutdown). */
export async function flushTelemetry(): Promise<void> {
  await provider?.forceFlush().catch(() => {});
}

const W3C = /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/;

/** Context from a `traceparent` (and `tracestate`), or the root context when absent or malformed. */
export function contextFromTraceparent(traceparent: unknown, tracestate?: unknown): Context {
  if (typeof traceparent !== 'string' || traceparent.length > 55 || !W3C.test(traceparent)) return context.active();
  const carrier: Record<string, string> = { traceparent };
  if (typeof tracestate === 'string' && tracestate.length <= 512) carrier.tracestate = tracestate;
  return propagation.extract(context.active(), carrier);
}

/** The `traceparent` of a context's span, or undefined with no valid span. */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
}

/** Context from HTTP-like headers (case-insensitive object). */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  const tp = headers.traceparent;
  const ts = headers.tracestate;
  return contextFromTraceparent(Array.isArray(tp) ? tp[0] : tp, Array.isArray(ts) ? ts[0] : ts);
}

/** Headers (`traceparent`, `tracestate`) for a context, to put on an HTTP request or NATS message. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/**
 * Runs `fn` in a new span (child of `parent`), recording an error and ending the span when done.
 * With tracing off the span is a no-op.
 */
export async function inSpan<T>(
  name: string,
  opts: { parent?: Context; kind?: SpanKind; attributes?: Attributes },
  fn: (span: Span, ctx: Context) => Promise<T>,
): Promise<T> {
  const parent = opts.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes }, parent);
  const ctx = trace.setSpan(parent, span);
  try {
    return await context.with(ctx, () => fn(span, ctx));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** pino mixin: every log line carries the active trace and span ids. */
export function traceLogFields(): Record<string, string> {
  const sc = trace.getSpan(context.active())?.spanContext();
  return sc && trace.isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}
