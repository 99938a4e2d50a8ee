/**
 * The OpenTelemetry side of telemetry.ts, loaded only when tracing is configured: the API with the
 * SDK's provider registered (its AsyncLocalStorage context manager included), so the active context
 * follows async calls. A context made before this was loaded (the no-op kind) is taken by its
 * trace position alone.
 */
import { ROOT_CONTEXT, context, createTraceState, trace, type Context as OtelContext, type Span as OtelSpan } from '@opentelemetry/api';
import { tracerProvider } from './telemetry-sdk.js';
import type { Context, Span, TraceBackend } from './telemetry.js';
import { validIds, type SpanRef } from './w3c.js';

export function otelBackend(serviceName: string, env: Record<string, string | undefined>): TraceBackend {
  const provider = tracerProvider(serviceName, env);
  const tracer = trace.getTracer('shrooms');
  const fromRef = (ref: SpanRef): OtelContext =>
    trace.setSpanContext(ROOT_CONTEXT, {
      traceId: ref.traceId,
      spanId: ref.spanId,
      traceFlags: ref.traceFlags,
      isRemote: true,
      ...(ref.traceState ? { traceState: createTraceState(ref.traceState) } : {}),
    });
  const otel = (ctx: Context): OtelContext => {
    if (typeof (ctx as OtelContext).getValue === 'function') return ctx as OtelContext;
    const ref = (ctx as { ref?: SpanRef }).ref;
    return ref ? fromRef(ref) : ROOT_CONTEXT;
  };
  return {
    active: () => context.active() as Context,
    with: (ctx, fn) => context.with(otel(ctx), fn),
    startSpan: (name, opts, parent) => tracer.startSpan(name, opts, otel(parent)) as Span,
    withSpan: (parent, span) => trace.setSpan(otel(parent), span as OtelSpan) as Context,
    fromRef: (ref) => fromRef(ref) as Context,
    refOf(ctx) {
      const sc = trace.getSpanContext(otel(ctx));
      if (!sc || !validIds(sc.traceId, sc.spanId)) return undefined;
      const state = sc.traceState?.serialize();
      return { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags, ...(state ? { traceState: state } : {}) };
    },
    flush: () => provider.forceFlush().catch(() => {}),
    shutdown: () => provider.shutdown().catch(() => {}),
  };
}
