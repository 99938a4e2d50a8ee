/** `list` (agents on the mesh) and `tasks` (ListTasks of one session). */
import { summarize } from '@shrooms/client';
import { TaskStateSchema, type TaskState } from '@shrooms/protocol';
import { makeClient, output, parse, run, UsageError } from './io.js';
import { cliEnv } from '../../config.js';
import { taskJson } from './show.js';

export const LIST_HELP = `usage: shrooms-agent a2a list [--machine M] [--json]

Every session on the mesh now (from presence signals): MACHINE/SESSION, harness, state, the task
it works on (its id: the whole name is AGENT:TASK; --json has it whole), open and queued tasks,
working directory.
`;

/** The id part of a task's whole name (`MACHINE/SESSION:ID`), or "-" for none. */
const taskId = (name: string | undefined) => (name ? name.slice(name.indexOf(':') + 1) : '-');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

export function listCommand(args: string[]): Promise<number> {
  return run('list', LIST_HELP, args, async () => {
    const { values, positionals } = parse(args, { machine: { type: 'string' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const out = output(values.json === true);
    const client = makeClient(values.gateway);
    const all = await client.listAgents();
    const agents = values.machine ? all.filter((a) => a.machine === values.machine) : all;
    out.data({ agents });
    if (agents.length === 0) out.say('no sessions on the mesh now');
    else
      out.say(
        table([
          ['AGENT', 'HARNESS', 'STATE', 'TASK', 'OPEN', 'QUEUED', 'DIRECTORY'],
          ...agents.map((a) => [a.name, a.harness, a.state, taskId(a.task), String(a.openTasks), String(a.queuedTasks), a.cwd ?? '']),
        ]),
      );
    return 0;
  });
}

const STATES = 'submitted, working, input-required, completed, failed, canceled, rejected';

export const TASKS_HELP = `usage: shrooms-agent a2a tasks [AGENT] [--state STATE] [--limit N] [--page TOKEN] [--json]

The tasks of one session (default: SHROOMS_AGENT_SESSION), newest first, from the ledger.
STATE: ${STATES} (or TASK_STATE_…).
STATUS shows queued and held (waiting for the owner's release) beside the states.
--limit 1–100 (default 20); --page continues where the last page ended.
`;

function stateArg(v: string | undefined): TaskState | undefined {
  if (!v) return undefined;
  const full = v.startsWith('TASK_STATE_') ? v : `TASK_STATE_${v.toUpperCase().replace(/-/g, '_')}`;
  const p = TaskStateSchema.safeParse(full);
  if (!p.success) {
    const sub = ['queued', 'held'].includes(v.toLowerCase())
      ? `; ${v} tasks are submitted ones: --state submitted (STATUS tells them apart)`
      : '';
    throw new UsageError(`unknown state ${JSON.stringify(v)}: one of ${STATES}${sub}`);
  }
  return p.data;
}

export function tasksCommand(args: string[]): Promise<number> {
  return run('tasks', TASKS_HELP, args, async () => {
    const { values, positionals } = parse(args, { state: { type: 'string' }, limit: { type: 'string' }, page: { type: 'string' } });
    const agent = positionals[0] ?? cliEnv().SHROOMS_AGENT_SESSION;
    if (!agent) throw new UsageError('say whose tasks: tasks MACHINE/SESSION (or set SHROOMS_AGENT_SESSION)');
    const limit = values.limit === undefined ? 20 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit is a whole number from 1 to 100');
    const out = output(values.json === true);
    const client = makeClient(values.gateway);
    const page = await client.list(agent, { state: stateArg(values.state), pageSize: limit, pageToken: values.page });
    out.data({
      agent: page.agent.name,
      tasks: page.tasks.map((t) => taskJson(t, page.agent.machine)),
      nextPageToken: page.nextPageToken,
      totalSize: page.totalSize,
    });
    if (page.tasks.length === 0) out.say(`no tasks of ${page.agent.name}${values.state ? ` in state ${values.state}` : ''}`);
    else {
      const rows = page.tasks.map((t) => {
        const s = summarize(t, page.agent.machine);
        const req = (s.request ?? '').replace(/\s+/g, ' ');
        return [s.task, s.status, s.updatedAt ?? '', req.length > 60 ? `${req.slice(0, 57)}…` : req];
      });
      out.say(table([['TASK', 'STATUS', 'UPDATED', 'REQUEST'], ...rows]));
      if (rows.some((r) => r[1] === 'held'))
        out.say(`held: waiting for the owner of ${page.agent.name}; on that machine: shrooms-agent a2a release TASK (or reject TASK)`);
      if (page.nextPageToken) out.say(`(${page.totalSize} in all; next page: --page ${page.nextPageToken})`);
    }
    return 0;
  });
}
