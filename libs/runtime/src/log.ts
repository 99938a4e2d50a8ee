import { pino, type Logger } from 'pino';
import { traceLogFields } from './telemetry.js';

export type { Logger };

/**
 * pino to stderr (stdout belongs to protocols such as MCP stdio). Object first, message second;
 * context goes in child loggers. Lines written inside a span carry `trace_id` and `span_id`.
 */
export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, base: { service: name }, mixin: traceLogFields }, pino.destination({ fd: 2, sync: false }));
}
