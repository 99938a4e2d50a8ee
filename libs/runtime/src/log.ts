import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * pino to stderr (stdout belongs to protocols such as MCP stdio). Object first, message second;
 * context goes in child loggers.
 */
export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, base: { service: name } }, pino.destination({ fd: 2, sync: false }));
}
