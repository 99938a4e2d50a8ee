/**
 * How every command reads its arguments: node's parseArgs (strict: an unknown option or a missing
 * value is a mistake), where a mistake is a UsageError carrying parseArgs's first line, printed as
 * one line — `shrooms-agent COMMAND: MESSAGE (see --help)` — and exit code 1.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A mistake in what the person typed: printed with `(see --help)`, exit 1. */
export class UsageError extends Error {}

/** What parseArgs returns for `T` (named, so the package's declarations can say it). */
export type ParsedArgs<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** parseArgs; a mistake throws a UsageError with its first line. */
export function parseStrict<T extends ParseArgsConfig>(config: T): ParsedArgs<T> {
  try {
    return parseArgs(config);
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]!);
  }
}

/** The line a usage mistake prints. */
export function usageLine(command: string, message: string): string {
  return `shrooms-agent ${command}: ${message} (see --help)\n`;
}

/** parseStrict for a command that handles no other errors: a mistake is printed, and undefined means exit 1. */
export function commandArgs<T extends ParseArgsConfig>(command: string, config: T): ParsedArgs<T> | undefined {
  try {
    return parseStrict(config);
  } catch (err) {
    process.stderr.write(usageLine(command, (err as UsageError).message));
    return undefined;
  }
}
