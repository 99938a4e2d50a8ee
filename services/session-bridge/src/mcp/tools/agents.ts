/** `list_agents`: every session on the mesh, from the signal field. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AgentInfoSchema, type AgentInfo } from '@shrooms/client';
import { z } from 'zod';
import type { ResolvedContext } from '../context.js';
import { ok, tool } from '../result.js';

/** One session as a model reads it: `laptop/web — claude, working on laptop/web:m-1, in /src/web (1 open, 2 queued)`. */
export function agentLine(a: AgentInfo): string {
  const load = a.openTasks || a.queuedTasks ? ` (${a.openTasks} open, ${a.queuedTasks} queued)` : '';
  return `${a.name} — ${a.harness}, ${a.state}${a.task ? ` on ${a.task}` : ''}${a.cwd ? `, in ${a.cwd}` : ''}${load}`;
}

export function registerAgentTools(server: McpServer, ctx: ResolvedContext): void {
  server.registerTool(
    'list_agents',
    {
      title: 'List agents',
      description:
        'Every coding-agent session on the mesh right now (from presence signals): its name MACHINE/SESSION, harness, state (idle, working, waiting), working directory and load. Use a name from here as `to` in ask_agent.',
      inputSchema: { machine: z.string().optional().describe('Only the sessions of this machine') },
      outputSchema: { agents: z.array(AgentInfoSchema), you: z.string().optional().describe('This session, MACHINE/SESSION') },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ machine }) =>
      tool(async () => {
        const all = await ctx.client.listAgents();
        const agents = machine ? all.filter((a) => a.machine === machine) : all;
        const you = await ctx.client.from();
        const lines = agents.map(agentLine);
        const text = [
          `${agents.length} agent${agents.length === 1 ? '' : 's'} on the mesh${machine ? ` on ${machine}` : ''}${you ? `; you are ${you}` : ''}.`,
          ...lines,
        ].join('\n');
        return ok(text, { agents, ...(you ? { you } : {}) });
      }),
  );
}
