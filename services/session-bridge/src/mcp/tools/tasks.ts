/** `ask_agent` and `task_status`: the asker's side of a task. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { TaskSummarySchema, describeTask, summarize, type TaskRef } from '@shrooms/client';
import { META, parseTaskName, type Task } from '@shrooms/protocol';
import { z } from 'zod';
import { MAX_WAIT_SECONDS, type ResolvedContext } from '../context.js';
import { progressReporter, type ToolExtra } from '../progress.js';
import { ok, tool } from '../result.js';
import { receiveReturned } from '../../attachments.js';

export const TaskResultSchema = TaskSummarySchema.extend({
  waitedOut: z.boolean().describe('True when the wait ended before the task finished or needed input; follow it with task_status'),
  returned: z
    .array(z.string())
    .optional()
    .describe("What the worker returned beside its reply: files (written under .shrooms/received/ in this session's folder), links, data"),
});

const waitSeconds = z.number().int().min(0).max(MAX_WAIT_SECONDS);

/** A new task whose parent is a task of the hosting bridge's session: the bridge keeps it for the cancel cascade. */
async function keepChild(ctx: ResolvedContext, child: string, t: Task): Promise<void> {
  const w = ctx.worker;
  const parent = t.metadata?.[META.parent];
  if (!w?.asked || typeof parent !== 'string') return;
  const p = parseTaskName(parent);
  if (!p || p.machine !== w.machine || p.session !== w.session) return;
  await w.asked(`${p.session}:${p.messageId}`, child).catch(() => {});
}

/** Follows a task with progress notifications, then answers with its summary. */
async function follow(ctx: ResolvedContext, ref: TaskRef, first: Task, asked: number, extra: ToolExtra) {
  // Never past the agent's own tool timeout (ctx.maxWaitSeconds): it would end the call without the answer.
  const seconds = Math.min(asked, ctx.maxWaitSeconds);
  let task = first;
  let settled = false;
  if (seconds > 0) {
    const progress = progressReporter(extra, {
      intervalMs: ctx.progressIntervalMs,
      totalSeconds: seconds,
      machine: ref.machine,
      explain: (s) => ctx.client.explain(s),
    });
    try {
      const r = await ctx.client.wait(
        ref.task,
        { timeoutMs: seconds * 1000, signal: extra.signal, onUpdate: (t) => progress.update(t) },
        first,
      );
      task = r.task;
      settled = r.settled;
    } finally {
      progress.stop();
    }
  }
  const s = await ctx.client.explain(summarize(task, ref.machine));
  const waitedOut = seconds > 0 && !settled;
  const returned = await receiveReturned(ctx.cwd, s.task, task);
  const text = [describeTask(s, { waitedOut }), ...returned].join('\n');
  return ok(text, { ...s, waitedOut, ...(returned.length ? { returned: returned.slice(1) } : {}) });
}

export function registerTaskTools(server: McpServer, ctx: ResolvedContext): void {
  server.registerTool(
    'ask_agent',
    {
      title: 'Ask another agent',
      description:
        'Give another session on the mesh a task and (by default) wait for its answer, up to 10 minutes. ' +
        'The task stays open until that worker finishes it; if the wait ends first you get the task as it stands — follow it with task_status. ' +
        'Files the worker returns are written into your folder under .shrooms/received/ and listed under its reply. ' +
        'To answer a task that needs input (input-required), pass its name as `task` with your answer as `text`. ' +
        'Say who you are and what you need; one question, one reply.',
      inputSchema: {
        to: z.string().optional().describe('MACHINE/SESSION, or a SESSION name as list_agents shows it. Optional with `task`.'),
        text: z.string().min(1).describe('The request (or the answer, with `task`)'),
        wait: z.boolean().default(true).describe('Wait for the answer (default true)'),
        wait_seconds: waitSeconds.optional().describe('How long to wait, at most 600 (default 600)'),
        task: z.string().optional().describe('Answer this blocked task (MACHINE/SESSION:ID) instead of asking a new one'),
      },
      outputSchema: TaskResultSchema.shape,
      annotations: { openWorldHint: true },
    },
    ({ to, text, wait, wait_seconds, task }, extra) =>
      tool(async () => {
        const sent = await ctx.client.send({ to, text, task, idPrefix: 'mcp' });
        await keepChild(ctx, sent.ref.task, sent.task);
        return follow(ctx, sent.ref, sent.task, wait ? (wait_seconds ?? ctx.maxWaitSeconds) : 0, extra);
      }),
  );

  server.registerTool(
    'task_status',
    {
      title: 'Task status',
      description:
        'The state of a task you asked (or were given): submitted/queued, working, input-required (answer it with ask_agent `task`), completed (with the reply), failed, canceled. ' +
        'With wait_seconds it follows the task until it finishes or needs input.',
      inputSchema: {
        task: z.string().describe('MACHINE/SESSION:ID (or SESSION:ID on this machine)'),
        wait_seconds: waitSeconds.default(0).describe('Follow the task this long, at most 600 (default 0: just look)'),
      },
      outputSchema: TaskResultSchema.shape,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ task, wait_seconds }, extra) =>
      tool(async () => {
        const ref = await ctx.client.taskRef(task);
        const first = await ctx.client.get(ref.task);
        return follow(ctx, ref, first, wait_seconds, extra);
      }),
  );
}
