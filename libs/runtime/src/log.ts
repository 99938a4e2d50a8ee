import { pino, type Logger } from 'pino';
import { traceLogFields } from './telemetry.js';

export type { Logger };

/**
 * pino to stderr (stdout belongs to protocols such as MCP stdio). Object first, message second;
 * context goes in child loggers. Lines written inside a span carry `trace_id` and `span_id`.
 * `level` comes from the caller's config (`LOG_LEVEL`, parsed there).
 */
export function createLogger(name: string, level: string): Logger {
  return pino({ name, level, base: { service: name }, mixin: traceLogFields }, pino.destination({ fd: 2, sync: false }));
}
