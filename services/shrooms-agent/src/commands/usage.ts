/**
 * How every command reads its arguments: node's parseArgs (strict: an unknown option or a missing
 * value is a mistake), where a mistake is a UsageError saying what was wrong, printed as one line —
 * `shrooms-agent COMMAND: MESSAGE (see --help)` — and exit code 1.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A mistake in what the person typed: printed with `(see --help)`, exit 1. */
export class UsageError extends Error {}

/** What parseArgs returns for `T` (named, so the package's declarations can say it). */
export type ParsedArgs<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** parseArgs; a mistake throws a UsageError saying it in a line (usageMistake). */
export function parseStrict<T extends ParseArgsConfig>(config: T): ParsedArgs<T> {
  try {
    return parseArgs(config);
  } catch (err) {
    throw new UsageError(usageMistake(err as Error & { code?: string }));
  }
}

/**
 * parseArgs's mistake in our words: `unknown option --nope`, `--at needs a value`, `--standby takes
 * no value`, `unexpected argument x`; any other, its first line. (Its own say "Unknown option '-x'.
 * To specify a positional argument …, as in '-- "-x"", with a quote left open.)
 */
export function usageMistake(err: Error & { code?: string }): string {
  const first = err.message.split('\n')[0]!;
  const quoted = /'([^']+)'/.exec(first)?.[1];
  if (!quoted) return first;
  const option = quoted.replace(/ <value>$/, '').replace(', ', '/');
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return first.includes('To specify a positional argument')
        ? `unknown option ${option} (text that starts with "-" goes after --: -- "${option}")`
        : `unknown option ${option}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (first.endsWith('argument missing')) return `${option} needs a value`;
      if (first.endsWith('does not take an argument')) return `${option} takes no value`;
      return first;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${option}: this command takes options only`;
    default:
      return first;
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
