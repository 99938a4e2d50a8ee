/**
 * OpenTelemetry (spec §10). Configured only by the standard `OTEL_*` variables: with no exporter
 * endpoint set, no OpenTelemetry module is loaded at all — the spans below are no-ops that carry
 * their parent's trace, as the API's own no-op tracer does, and a process holds about 0.6 MB less.
 * With one set, `initTelemetry` loads the API and the SDK (telemetry-otel.ts) and every function
 * here goes through them. W3C trace context travels in HTTP headers, NATS message headers and task
 * metadata (`shrooms/traceparent`); a malformed `traceparent` is ignored (a new trace starts),
 * never joined or thrown on.
 *
 * Services use only what this module exports (never `@opentelemetry/api` directly), so that which
 * of the two is behind it is decided once, at start.
 */
import { formatTraceparent, parseTraceparent, type SpanRef } from './w3c.js';

/** The span kinds and status codes, with OpenTelemetry's values. */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];
export const SpanStatusCode = { UNSET: 0, OK: 1, ERROR: 2 } as const;

export type Attributes = Record<string, string | number | boolean | undefined>;

/** What the services do with a span (a subset of OpenTelemetry's `Span`). */
export interface Span {
  setAttribute(key: string, value: string | number | boolean): unknown;
  addEvent(name: string, attributes?: Attributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(err: Error): void;
  updateName(name: string): unknown;
  end(endTime?: number): void;
}

declare const CONTEXT: unique symbol;
/** A trace context: opaque; made and read only by this module's functions. */
export interface Context {
  readonly [CONTEXT]?: never;
}

/** What is behind the functions below: the no-op one, or OpenTelemetry's (telemetry-otel.ts). */
export interface TraceBackend {
  active(): Context;
  with<T>(ctx: Context, fn: () => T): T;
  startSpan(name: string, opts: { kind: SpanKind; attributes?: Attributes }, parent: Context): Span;
  withSpan(parent: Context, span: Span): Context;
  fromRef(ref: SpanRef): Context;
  refOf(ctx: Context): SpanRef | undefined;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Tracing off: a span records nothing and carries its parent's place in the trace. */
class NoopSpan implements Span {
  constructor(readonly ref: SpanRef | undefined) {}
  setAttribute() {
    return this;
  }
  addEvent() {
    return this;
  }
  setStatus() {
    return this;
  }
  recordException() {}
  updateName() {
    return this;
  }
  end() {}
}

type NoopContext = Context & { ref?: SpanRef };
const ROOT: NoopContext = {};

/** No context manager: the active context is always the root one, as with the API's no-op. */
const noop: TraceBackend = {
  active: () => ROOT,
  with: (_ctx, fn) => fn(),
  startSpan: (_name, _opts, parent) => new NoopSpan((parent as NoopContext).ref),
  withSpan: (_parent, span) => ({ ref: (span as NoopSpan).ref }) as NoopContext,
  fromRef: (ref) => ({ ref }) as NoopContext,
  refOf: (ctx) => (ctx as NoopContext).ref,
  flush: async () => {},
  shutdown: async () => {},
};

let backend: TraceBackend = noop;
let started = false;

/** True when an OTLP endpoint is configured and traces are not switched off. */
export function tracingConfigured(env: Record<string, string | undefined> = process.env): boolean {
  if ((env.OTEL_TRACES_EXPORTER ?? '').split(',').includes('none') || env.OTEL_SDK_DISABLED === 'true') return false;
  return !!(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Installs OpenTelemetry once per process when configured (loading the API and the SDK then);
 * resolves with a shutdown that flushes.
 */
export async function initTelemetry(
  serviceName: string,
  env: Record<string, string | undefined> = process.env,
): Promise<() => Promise<void>> {
  if (started || !tracingConfigured(env)) return async () => {};
  started = true;
  const b = (backend = (await import('./telemetry-otel.js')).otelBackend(serviceName, env));
  return () => b.shutdown();
}

/** Exports what is buffered (called on shutdown). */
export function flushTelemetry(): Promise<void> {
  return backend.flush();
}

/** The active context (the root one with tracing off). */
export function activeContext(): Context {
  return backend.active();
}

/** Context from a `traceparent` (and `tracestate`), or the active context when absent or malformed. */
export function contextFromTraceparent(traceparent: unknown, tracestate?: unknown): Context {
  const ref = parseTraceparent(traceparent, tracestate);
  return ref ? backend.fromRef(ref) : backend.active();
}

/** Context from HTTP-like headers (case-insensitive object). */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return contextFromTraceparent(first(headers.traceparent), first(headers.tracestate));
}

/** True when the context names a span of a trace (a valid `traceparent` came with it). */
export function inTrace(ctx: Context): boolean {
  return backend.refOf(ctx) !== undefined;
}

/** Headers (`traceparent`, `tracestate`) for a context, to put on an HTTP request or NATS message. */
export function traceHeaders(ctx: Context = backend.active()): Record<string, string> {
  const ref = backend.refOf(ctx);
  return ref ? (formatTraceparent(ref) as Record<string, string>) : {};
}

/** The `traceparent` of a context's span, or undefined with no valid span. */
export function traceparentOf(ctx: Context = backend.active()): string | undefined {
  const ref = backend.refOf(ctx);
  return ref ? formatTraceparent(ref).traceparent : undefined;
}

/** A span that the caller ends (a task's life); a child of `parent`, by default the active context. */
export function startSpan(name: string, opts: { kind?: SpanKind; attributes?: Attributes }, parent: Context = backend.active()): Span {
  return backend.startSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, ...(opts.attributes ? { attributes: opts.attributes } : {}) },
    parent,
  );
}

/** The context of `span` under `parent` (to give its `traceparent` to others). */
export function contextWithSpan(span: Span, parent: Context = backend.active()): Context {
  return backend.withSpan(parent, span);
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
  const parent = opts.parent ?? backend.active();
  const span = startSpan(name, opts, parent);
  const ctx = backend.withSpan(parent, span);
  try {
    return await backend.with(ctx, () => fn(span, ctx));
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
  if (backend === noop) return {};
  const ref = backend.refOf(backend.active());
  return ref ? { trace_id: ref.traceId, span_id: ref.spanId } : {};
}
