/**
 * The W3C Trace Context propagator (`traceparent`, `tracestate`), as `@opentelemetry/core`'s
 * `W3CTraceContextPropagator` does it, over the API alone: core is a few dozen modules that every
 * process would load for these few lines, tracing on or off.
 */
import {
  createTraceState,
  isSpanContextValid,
  trace,
  TraceFlags,
  type Context,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
} from '@opentelemetry/api';

const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';
const VERSION = '00';
/** version-traceid-spanid-flags; a future version may append fields after a dash. */
const PARENT = /^\s?([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})(-.*)?\s?$/;

export class W3CPropagator implements TextMapPropagator {
  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    const sc = trace.getSpanContext(ctx);
    if (!sc || !isSpanContextValid(sc)) return;
    const flags = `0${Number(sc.traceFlags || TraceFlags.NONE).toString(16)}`.slice(-2);
    setter.set(carrier, TRACEPARENT, `${VERSION}-${sc.traceId}-${sc.spanId}-${flags}`);
    if (sc.traceState) setter.set(carrier, TRACESTATE, sc.traceState.serialize());
  }

  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
    const header = first(getter.get(carrier, TRACEPARENT));
    const m = typeof header === 'string' ? PARENT.exec(header) : null;
    // Version ff is invalid; version 00 has exactly four fields.
    if (!m || m[1] === 'ff' || (m[1] === VERSION && m[5])) return ctx;
    const sc = { traceId: m[2]!, spanId: m[3]!, traceFlags: parseInt(m[4]!, 16), isRemote: true };
    if (!isSpanContextValid(sc)) return ctx;
    const state = getter.get(carrier, TRACESTATE);
    const raw = Array.isArray(state) ? state.join(',') : state;
    return trace.setSpanContext(ctx, typeof raw === 'string' ? { ...sc, traceState: createTraceState(raw) } : sc);
  }

  fields(): string[] {
    return [TRACEPARENT, TRACESTATE];
  }
}
