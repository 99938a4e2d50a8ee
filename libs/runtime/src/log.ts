import { closeSync, openSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';
import { formatLogLine } from './log-format.js';
import { traceLogFields } from './telemetry.js';

export type { Logger };

/**
 * pino to stderr (stdout belongs to protocols such as MCP stdio). Object first, message second;
 * context goes in child loggers. Lines written inside a span carry `trace_id` and `span_id`.
 * `level` and `format` come from the caller's config (`LOG_LEVEL`, `LOG_FORMAT`, parsed there): on
 * a terminal (`auto`) or with `text` stderr gets lines a person reads (log-format.ts), elsewhere
 * JSON. With `file`, every line also goes to that file as JSON (appended; made 0600), for a process
 * a person started by hand.
 */
export function createLogger(name: string, level: string, file?: string, format: 'auto' | 'text' | 'json' = 'auto'): Logger {
  const text = format === 'text' || (format === 'auto' && process.stderr.isTTY === true);
  const stderr: DestinationStream = text
    ? { write: (line: string) => void process.stderr.write(`${formatLogLine(line.trimEnd())}\n`) }
    : pino.destination({ fd: 2, sync: false });
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
