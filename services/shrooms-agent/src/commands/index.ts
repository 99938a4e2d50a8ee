import type { Command } from './types.js';
import { a2aCommand } from './a2a/index.js';
import { bridgeCommand } from './bridge.js';
import { configCommand } from './config.js';
import { logsCommand } from './logs.js';
import { mcpCommand } from './mcp.js';
import { meshCommand } from './mesh/index.js';
import { serviceCommand } from './service.js';
import { upCommand } from './up.js';

export const COMMANDS: Record<string, Command> = {
  up: upCommand,
  bridge: bridgeCommand,
  gateway: serviceCommand('gateway', 'run the A2A gateway of this machine', async () => (await import('@shrooms/gateway')).runGateway()),
  guard: serviceCommand('guard', 'run a guard replica (admission: loop guard, chain rules, allow-lists)', async () =>
    (await import('@shrooms/guard')).runGuard(),
  ),
  a2a: a2aCommand,
  mcp: mcpCommand,
  config: configCommand,
  mesh: meshCommand,
  logs: logsCommand,
  scheduler: serviceCommand('scheduler', 'run the scheduler (tasks at a time, once or repeating)', async () =>
    (await import('@shrooms/scheduler')).runScheduler(),
  ),
};

export function usage(): string {
  const lines = Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(10)} ${c.summary}`);
  return `usage: shrooms-agent <command> [options]   (each command has --help)\n\ncommands:\n${lines.join('\n')}\n`;
}
