/**
 * W3C Trace Context (`traceparent`, `tracestate`) as plain data, with no OpenTelemetry module: the
 * parsing and formatting every process needs to pass a trace on, tracing on or off. Read as
 * `@opentelemetry/core`'s `W3CTraceContextPropagator` reads it, and stricter: a header longer than
 * a version-00 one, or with fields past the fourth, is refused (a new trace starts).
 */

/** One span's place in a trace, as a `traceparent` (and `tracestate`) carry it. */
export interface SpanRef {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: string;
}

const VERSION = '00';
const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})$/;
const TRACE_ID = /^[\da-f]{32}$/;
const SPAN_ID = /^[\da-f]{16}$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** Longest `tracestate` kept (a longer one is dropped, not the trace). */
const TRACESTATE_MAX = 512;

/** True for ids OpenTelemetry would call a valid span context: lower-case hex, not all zeros. */
export function validIds(traceId: string, spanId: string): boolean {
  return TRACE_ID.test(traceId) && traceId !== ZERO_TRACE && SPAN_ID.test(spanId) && spanId !== ZERO_SPAN;
}

/** The span a `traceparent` names, or undefined when absent, malformed, version ff or all zeros. */
export function parseTraceparent(traceparent: unknown, tracestate?: unknown): SpanRef | undefined {
  if (typeof traceparent !== 'string' || traceparent.length > 55) return undefined;
  const m = TRACEPARENT.exec(traceparent);
  if (!m || m[1] === 'ff' || !validIds(m[2]!, m[3]!)) return undefined;
  const ref: SpanRef = { traceId: m[2]!, spanId: m[3]!, traceFlags: parseInt(m[4]!, 16) };
  if (typeof tracestate === 'string' && tracestate.length <= TRACESTATE_MAX) ref.traceState = tracestate;
  return ref;
}

/** `traceparent` (and `tracestate` when there is one) for a span. */
export function formatTraceparent(ref: SpanRef): { traceparent: string; tracestate?: string } {
  const flags = `0${(ref.traceFlags & 0xff).toString(16)}`.slice(-2);
  return {
    traceparent: `${VERSION}-${ref.traceId}-${ref.spanId}-${flags}`,
    ...(ref.traceState ? { tracestate: ref.traceState } : {}),
  };
}
