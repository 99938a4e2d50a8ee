/**
 * What every `a2a` subcommand shares: argument parsing that turns mistakes into one-line usage
 * errors, the client from the environment, human or `--json` output, and the exit codes:
 *
 *   0  ok (also: a task still open after the wait, or one that needs input; an act that was done —
 *      cancel, release, reject, update, ack — whatever state it leaves the task in)
 *   1  usage or connection errors, names that do not exist — the message says what to do
 *   2  the task shown or waited for (send, get) failed, was rejected or canceled, or a refusal (loop
 *      guard, chain, allow-list, update of another session's task, a task that cannot be canceled)
 */
import type { ParseArgsConfig } from 'node:util';
import { GatewayUnreachableError, ShroomsClient, clientOptionsFromEnv, type TaskSummary } from '@shrooms/client';
import { ShroomsError } from '@shrooms/protocol';
import { UsageError, parseStrict, usageLine, type ParsedArgs } from '../usage.js';

export { UsageError };

export const EXIT = { ok: 0, error: 1, refused: 2 } as const;

const REFUSAL_STATUSES = new Set(['PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ALREADY_EXISTS']);

export function exitForError(err: unknown): number {
  if (err instanceof ShroomsError) return REFUSAL_STATUSES.has(err.spec.status) ? EXIT.refused : EXIT.error;
  return EXIT.error;
}

export function exitForTask(s: Pick<TaskSummary, 'state'>): number {
  return s.state === 'TASK_STATE_FAILED' || s.state === 'TASK_STATE_REJECTED' || s.state === 'TASK_STATE_CANCELED' ? EXIT.refused : EXIT.ok;
}

/** Options every subcommand takes. */
export const COMMON = {
  json: { type: 'boolean' },
  gateway: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];
import { shellEnv } from '../../config.js';

type Options = NonNullable<ParseArgsConfig['options']>;
/** What `parse` returns (named, so the package's declarations can say it). */
export type Parsed<O extends Options> = ParsedArgs<{ args: string[]; options: typeof COMMON & O; allowPositionals: true; strict: true }>;

export function parse<O extends Options>(args: string[], options: O): Parsed<O> {
  return parseStrict({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
}

export interface Out {
  json: boolean;
  /** Human text to stdout (skipped with --json). */
  say(text: string): void;
  /** The JSON document to stdout (only with --json). */
  data(value: unknown): void;
}

export function output(json: boolean): Out {
  return {
    json,
    say(text) {
      if (!json) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    },
    data(value) {
      if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    },
  };
}

export function makeClient(gateway?: string): ShroomsClient {
  return new ShroomsClient(clientOptionsFromEnv(shellEnv(), gateway ? { gatewayUrl: gateway } : {}));
}

/** Runs a subcommand body with the client; errors become one line on stderr (and JSON with --json). */
export async function run(name: string, help: string, args: string[], body: (args: string[]) => Promise<number>): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(help);
    return EXIT.ok;
  }
  const json = args.includes('--json');
  try {
    return await body(args);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(usageLine(`a2a ${name}`, err.message));
      return EXIT.error;
    }
    const prefix = `shrooms-agent a2a ${name}`;
    const line = err instanceof ShroomsError ? `${err.message} [${err.key}]` : err instanceof Error ? err.message : String(err);
    process.stderr.write(`${prefix}: ${line.replace(/\s*\n\s*/g, ' ')}\n`);
    if (json) {
      const e =
        err instanceof ShroomsError
          ? {
              key: err.key,
              code: err.spec.code,
              message: err.message,
              retryable: err.retryable,
              ...(Object.keys(err.details).length ? { details: err.details } : {}),
            }
          : err instanceof GatewayUnreachableError
            ? { key: 'GATEWAY_UNREACHABLE', message: err.message, retryable: true, url: err.url }
            : { key: 'INTERNAL', message: line };
      process.stdout.write(`${JSON.stringify({ error: e }, null, 2)}\n`);
    }
    return exitForError(err);
  }
}

/** A positive whole number of seconds from an option, at most `max`. */
export function seconds(v: string | undefined, name: string, dflt: number, max: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new UsageError(`--${name} must be a whole number of seconds from 0 to ${max}`);
  return n;
}
