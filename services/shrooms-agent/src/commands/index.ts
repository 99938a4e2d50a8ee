/**
 * The CLI's commands. Each one's module (and what it imports: the service, the A2A client, the MCP
 * SDK …) loads only when that command runs, so a service process holds its own code and no other
 * command's.
 */
import type { Command } from './types.js';
import { serviceCommand } from './service.js';

type Loaded = Pick<Command, 'run'>;

/** A command whose module is imported when it runs, not when the CLI starts. */
function lazy(summary: string, load: () => Promise<Loaded>): Command {
  return { summary, run: async (args) => (await load()).run(args) };
}

export const COMMANDS: Record<string, Command> = {
  up: lazy('start the whole mesh on this machine with a demo echo session', async () => (await import('./up.js')).upCommand),
  bridge: lazy(
    'run the bridge of one session (claude, pi, any ACP agent, or echo)',
    async () => (await import('./bridge.js')).bridgeCommand,
  ),
  gateway: serviceCommand('gateway', 'run the A2A gateway of this machine', async () => (await import('@shrooms/gateway')).runGateway()),
  guard: serviceCommand('guard', 'run a guard replica (admission: loop guard, chain rules, allow-lists)', async () =>
    (await import('@shrooms/guard')).runGuard(),
  ),
  a2a: lazy(
    'talk to sessions on the mesh: list | send | get | cancel | ack | update | tasks | schedule | release | reject | reminders | guard',
    async () => (await import('./a2a/index.js')).a2aCommand,
  ),
  mcp: lazy('run the MCP server "shrooms" (stdio, or --http PORT on loopback)', async () => (await import('./mcp.js')).mcpCommand),
  config: lazy('print the MCP setup of a session for Claude Code and pi', async () => (await import('./config.js')).configCommand),
  mesh: lazy(
    'join machines into one mesh: NATS, gateway and unit files per machine',
    async () => (await import('./mesh/index.js')).meshCommand,
  ),
  logs: lazy(
    "show where this machine's logs are, and follow one (a part of up, or a session's bridge)",
    async () => (await import('./logs.js')).logsCommand,
  ),
  scheduler: serviceCommand('scheduler', 'run the scheduler (tasks at a time, once or repeating)', async () =>
    (await import('@shrooms/scheduler')).runScheduler(),
  ),
};

export function usage(): string {
  const lines = Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(10)} ${c.summary}`);
  return `usage: shrooms-agent <command> [options]   (each command has --help)\n\ncommands:\n${lines.join('\n')}\n`;
}
