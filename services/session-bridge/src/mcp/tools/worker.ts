/** `task_update` (the worker finishes a task) and `task_ack` (the asker has read the answer). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { TaskSummarySchema, returnedParts, summarize } from '@shrooms/client';
import { ShroomsError, UpdateStatusSchema } from '@shrooms/protocol';
import { z } from 'zod';
import type { ResolvedContext } from '../context.js';
import { ok, tool } from '../result.js';

const WORDS = { done: 'done', blocked: 'blocked (the asker sees what you need)', failed: 'failed' } as const;

export function registerWorkerTools(server: McpServer, ctx: ResolvedContext): void {
  server.registerTool(
    'task_update',
    {
      title: 'Finish a task you were given',
      description:
        'Say how a task you were given ended — the end of your turn does not finish it. ' +
        'status "done" with a short summary of the result; "blocked" saying what you need from the asker (they answer, and the task comes back to you); "failed" saying why. ' +
        'Only for tasks of your own session. Without `task`, the task you are working on now.',
      inputSchema: {
        task: z.string().optional().describe('The task (SESSION:ID as in its header line); default: the one you work on now'),
        status: UpdateStatusSchema.describe('done | blocked | failed'),
        text: z.string().min(1).describe('The summary, what you need, or why it failed'),
        files: z
          .array(z.string())
          .max(8)
          .optional()
          .describe(
            'With "done": files to return with the answer (paths inside your working folder, relative to it; each at most 64 KiB). ' +
              'A path outside the folder, or a link leading out of it, is refused.',
          ),
        data: z.unknown().optional().describe('With "done": structured data (JSON) to return with the answer'),
      },
      outputSchema: TaskSummarySchema.shape,
      annotations: { destructiveHint: false, idempotentHint: false },
    },
    ({ task, status, text, files, data }) =>
      tool(async () => {
        // Confined to the session's folder: this tool runs without a prompt and reads with the
        // bridge's rights, so a task from elsewhere must not be able to have it send back ~/.ssh.
        const parts = await returnedParts(files, data, { cwd: ctx.cwd, confine: true });
        const name = task ?? ctx.currentTask();
        if (!name)
          throw new ShroomsError(
            'INVALID_PARAMS',
            'you are not working on a task now; name the task (its id is in the "[shrooms task …]" line)',
          );
        const ref = await ctx.client.taskRef(name);
        const own = ctx.worker && ref.machine === ctx.worker.machine && ref.session === ctx.worker.session;
        // The session's own task: its bridge (this process) writes it; anything else is refused
        // by the client with the reason, before it leaves.
        const t = own ? await ctx.worker!.update(ref.id, status, text, parts) : await ctx.client.update(name, status, text, { parts });
        const s = summarize(t, ref.machine);
        return ok(`Task ${s.task} is now ${s.status}: marked ${WORDS[status]}.`, s);
      }),
  );

  server.registerTool(
    'task_ack',
    {
      title: 'Acknowledge an answer',
      description: "Note that you have read a task's answer (the asker's bookkeeping). It never closes or reopens the task.",
      inputSchema: { task: z.string().describe('MACHINE/SESSION:ID of a task you asked') },
      outputSchema: TaskSummarySchema.shape,
      annotations: { idempotentHint: true },
    },
    ({ task }) =>
      tool(async () => {
        const t = await ctx.client.ack(task);
        const ref = await ctx.client.taskRef(task);
        const s = summarize(t, ref.machine);
        return ok(`Acknowledged ${s.task} (${s.status}).`, s);
      }),
  );
}
