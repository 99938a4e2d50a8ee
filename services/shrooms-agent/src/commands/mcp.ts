/** `shrooms-agent mcp`: the MCP server `shrooms` over stdio, or over HTTP on loopback with --http. */
import type { Command } from './types.js';
import { commandArgs } from './usage.js';
import { shellEnv } from '../config.js';

const HELP = `usage: shrooms-agent mcp [--http PORT [--host 127.0.0.1]]

Runs the MCP server "shrooms" (list_agents, ask_agent, task_status, task_update, task_ack,
schedule_task, list_schedules, cancel_schedule) over stdio — what Claude Code's --mcp-config
starts — or, with --http, over streamable HTTP at http://127.0.0.1:PORT/mcp (PORT 0 = any free
port; loopback only), for pi's extension. \`shrooms-agent config\` prints both setups.

Environment: SHROOMS_AGENT_SESSION (the session the tools serve), SHROOMS_MACHINE,
SHROOMS_GATEWAY_URL, SHROOMS_TASK_ID and TRACEPARENT (inside a task), SHROOMS_ASK_PROGRESS_MS
(progress interval while ask_agent waits, default 15000), SHROOMS_ASK_MAX_WAIT_SECONDS (the longest
wait of ask_agent and task_status, 1-600, default 600: keep it below your agent's own MCP tool
timeout). Schedules go through the gateway.
`;

export const mcpCommand: Pick<Command, 'run'> = {
  async run(args) {
    const parsed = commandArgs('mcp', {
      args,
      options: { http: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
    if (!parsed) return 1;
    const { values } = parsed;
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    const { createMcpStdioServer, startMcpHttpServer } = await import('@shrooms/session-bridge');
    if (values.http === undefined) {
      // stdout is the protocol from here on: nothing else may be written to it.
      const srv = await createMcpStdioServer({ env: shellEnv() });
      await srv.closed;
      await srv.close();
      return 0;
    }
    const port = Number(values.http);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write('shrooms-agent mcp: --http takes a port number (0 = any free port)\n');
      return 1;
    }
    let srv;
    try {
      srv = await startMcpHttpServer({ port, host: values.host ?? '127.0.0.1', context: { env: shellEnv() } });
    } catch (err) {
      process.stderr.write(`shrooms-agent mcp: ${(err as Error).message}\n`);
      return 1;
    }
    process.stdout.write(`shrooms MCP server listening on ${srv.url}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await srv.close();
    return 0;
  },
};
