import { closeSync, openSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import { traceLogFields } from './telemetry.js';

export type { Logger };

/**
 * pino to stderr (stdout belongs to protocols such as MCP stdio). Object first, message second;
 * context goes in child loggers. Lines written inside a span carry `trace_id` and `span_id`.
 * `level` comes from the caller's config (`LOG_LEVEL`, parsed there). With `file`, every line also
 * goes to that file (appended; made 0600), for a process a person started by hand.
 */
export function createLogger(name: string, level: string, file?: string): Logger {
  const stderr = pino.destination({ fd: 2, sync: false });
  const opts = { name, level, base: { service: name }, mixin: traceLogFields };
  if (!file) return pino(opts, stderr);
  closeSync(openSync(file, 'a', 0o600));
  const toFile = pino.destination({ dest: file, append: true, sync: false });
  return pino(
    opts,
    pino.multistream([
      { stream: stderr, level: level as pino.Level },
      { stream: toFile, level: level as pino.Level },
    ]),
  );
}
