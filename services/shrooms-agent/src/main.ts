#!/usr/bin/env node
/**
 * `shrooms-agent`: one command for people and sessions. Each subcommand lives in commands/ and
 * loads its service only when run.
 */
import { COMMANDS, usage } from './commands/index.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 1;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`shrooms-agent: unknown command "${name}"\n\n${usage()}`);
    return 1;
  }
  return cmd.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined && code !== -1) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`shrooms-agent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
