import type { Command } from './types.js';

/** A service that runs until stopped, configured by its environment (see docs/operators.md). */
export function serviceCommand(name: string, summary: string, start: () => Promise<unknown>): Command {
  return {
    summary,
    async run(args) {
      if (args.includes('--help') || args.includes('-h')) {
        process.stdout.write(
          `usage: shrooms-agent ${name}\n\n${summary}. Configured by environment variables (NATS_URL, SHROOMS_MACHINE, …).\n`,
        );
        return 0;
      }
      await start();
      return -1;
    },
  };
}
