/** `schedule_task`, `list_schedules`, `cancel_schedule`: tasks at a time, through the scheduler. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ScheduleViewSchema, describeSchedule } from '@shrooms/client';
import { z } from 'zod';
import type { ResolvedContext } from '../context.js';
import { ok, tool } from '../result.js';

export function registerScheduleTools(server: McpServer, ctx: ResolvedContext): void {
  server.registerTool(
    'schedule_task',
    {
      title: 'Schedule a task',
      description:
        'Give one or more sessions a task at a time, once or repeating. Each occurrence becomes an ordinary task. ' +
        'at: a local time ("2026-10-12T08:00", or "08:00" for the next 08:00), read in zone or else in the zone of this machine (the owner\'s), ' +
        'or zoned ("2026-10-12T08:00[Europe/Berlin]"), or an instant ("2026-10-12T06:00:00Z"); ' +
        'or instead in: a delay from now ("90s", "10m", "1h30m", "3d"). ' +
        'repeat: "daily", "weekly:mon,fri", "monthly:31", "yearly", "every 15m", with ";until=…" or ";count=N".',
      inputSchema: {
        to: z.union([z.string(), z.array(z.string()).min(1)]).describe('MACHINE/SESSION (or several)'),
        text: z.string().min(1).describe('The task each occurrence asks'),
        at: z.string().min(1).optional().describe('When (first occurrence); or give `in`'),
        in: z.string().min(1).optional().describe('Instead of `at`: how long from now (first occurrence)'),
        zone: z.string().optional().describe("IANA time zone for a local `at` (default: this machine's)"),
        repeat: z.string().optional().describe('Repeat rule (short form); none = once'),
        reply: z.boolean().default(false).describe('Send each result back to you as a task'),
        id: z.string().optional().describe('Your own schedule id (creating it again returns the same schedule)'),
      },
      outputSchema: { schedule: ScheduleViewSchema, created: z.boolean() },
      annotations: { openWorldHint: true },
    },
    ({ to, text, at, in: delay, zone, repeat, reply, id }) =>
      tool(async () => {
        const r = await ctx.client.createSchedule({
          to: Array.isArray(to) ? to : [to],
          text,
          at,
          in: delay,
          zone,
          repeat,
          replyTo: reply,
          id,
        });
        return ok(`${r.created ? 'Scheduled' : 'Already scheduled'}: ${describeSchedule(r.schedule)}`, {
          schedule: r.schedule,
          created: r.created,
        });
      }),
  );

  server.registerTool(
    'list_schedules',
    {
      title: 'List schedules',
      description: 'Scheduled tasks (active ones unless all=true), soonest first.',
      inputSchema: {
        all: z.boolean().default(false).describe('Also canceled and finished ones'),
        mine: z.boolean().default(false).describe('Only the ones you scheduled'),
        to: z.string().optional().describe('Only the ones for this MACHINE/SESSION'),
      },
      outputSchema: { schedules: z.array(ScheduleViewSchema), total: z.number().int() },
      annotations: { readOnlyHint: true },
    },
    ({ all, mine, to }) =>
      tool(async () => {
        const r = await ctx.client.listSchedules({ all, mine, ...(to ? { recipient: to } : {}) });
        const head = `${r.total} schedule${r.total === 1 ? '' : 's'}${r.schedules.length < r.total ? ` (showing ${r.schedules.length})` : ''}.`;
        return ok([head, ...r.schedules.map((s) => describeSchedule(s))].join('\n'), { schedules: r.schedules, total: r.total });
      }),
  );

  server.registerTool(
    'cancel_schedule',
    {
      title: 'Cancel a schedule',
      description: 'Cancel a schedule: it fires no more. Tasks it already started are not touched.',
      inputSchema: { id: z.string().min(1).describe('The schedule id') },
      outputSchema: { schedule: ScheduleViewSchema },
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    ({ id }) =>
      tool(async () => {
        const schedule = await ctx.client.cancelSchedule(id);
        return ok(`Canceled: ${describeSchedule(schedule)}`, { schedule });
      }),
  );
}
