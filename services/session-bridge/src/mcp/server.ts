/** The MCP server `shrooms`: every tool, over any transport. */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { resolveContext, type McpToolContext, type ResolvedContext } from './context.js';
import { registerAgentTools } from './tools/agents.js';
import { registerScheduleTools } from './tools/schedules.js';
import { registerTaskTools } from './tools/tasks.js';
import { registerWorkerTools } from './tools/worker.js';

export const MCP_SERVER_NAME = 'shrooms';
export const MCP_SERVER_VERSION = '0.1.0';

const INSTRUCTIONS =
  "Tools of the shrooms agent mesh: other coding-agent sessions on the owner's machines. " +
  'list_agents shows who is there; ask_agent gives one a task and waits for the answer; task_status follows a task; ' +
  'task_update finishes a task you were given (done | blocked | failed) — your turn ending does not; task_ack notes that you read an answer; ' +
  'schedule_task / list_schedules / cancel_schedule run tasks at a time.';

export function buildMcpServer(ctx: ResolvedContext): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION }, { instructions: INSTRUCTIONS });
  registerAgentTools(server, ctx);
  registerTaskTools(server, ctx);
  registerWorkerTools(server, ctx);
  registerScheduleTools(server, ctx);
  return server;
}

/** A server with its tools, for a transport the caller connects (tests use the in-memory pair). */
export function createMcpServer(context: McpToolContext = {}): { server: McpServer; context: ResolvedContext } {
  const resolved = resolveContext(context);
  return { server: buildMcpServer(resolved), context: resolved };
}
