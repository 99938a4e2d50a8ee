import type { FastifyRequest } from 'fastify';
import { contextFromHeaders, inTrace, type Context } from '@shrooms/runtime';

/** The client's W3C trace context from `traceparent`/`tracestate`, or undefined (a new trace starts). */
export function headerContext(req: FastifyRequest): Context | undefined {
  const ctx = contextFromHeaders(req.headers);
  return inTrace(ctx) ? ctx : undefined;
}
