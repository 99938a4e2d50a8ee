/** The owner's controls: `release` / `reject` a held task, `reminders stop|resume` for a session. */
import { isTaskName } from '@shrooms/client';
import { makeClient, output, parse, run, UsageError } from './io.js';
import { printTask } from './show.js';

export const RELEASE_HELP = `usage: shrooms-agent a2a release TASK [--json]
       shrooms-agent a2a reject TASK [--json]

A task an agent gave a session that runs tools without asking waits, held (shrooms/held), until
its owner lets it through (release: it runs) or refuses it (reject: TASK_STATE_REJECTED). Only the
owner may, on the session's own machine. TASK is MACHINE/SESSION:ID, or SESSION:ID of this machine.
`;

function heldTask(action: 'release' | 'reject') {
  return (args: string[]): Promise<number> =>
    run(action, RELEASE_HELP, args, async () => {
      const { values, positionals } = parse(args, {});
      const name = positionals[0];
      if (!name || !isTaskName(name)) throw new UsageError(`say which held task to ${action}: MACHINE/SESSION:ID or SESSION:ID`);
      const out = output(values.json === true);
      const client = makeClient(values.gateway);
      try {
        const ref = await client.taskRef(name);
        const res = (await client.control(`${ref.machine}/${ref.session}`, action, ref.task)) as { task?: Parameters<typeof printTask>[1] };
        // The act was done: 0, though the task it leaves is REJECTED (2 is for a task that failed
        // you, or a refusal of the act itself).
        if (res.task) printTask(out, res.task, ref.machine);
        else out.data(res);
        return 0;
      } finally {
        await client.close();
      }
    });
}

export const releaseCommand = heldTask('release');
export const rejectCommand = heldTask('reject');

export const REMINDERS_HELP = `usage: shrooms-agent a2a reminders stop|resume SESSION [--json]

Stops (or resumes) the watchdog's reminders for a session: its open tasks are left alone, nobody
nudges it. SESSION is MACHINE/SESSION or a session of this machine. Owner only, on its machine.
`;

export function remindersCommand(args: string[]): Promise<number> {
  return run('reminders', REMINDERS_HELP, args, async () => {
    const { values, positionals } = parse(args, {});
    const [what, agent] = positionals;
    if (what !== 'stop' && what !== 'resume') throw new UsageError('say stop or resume');
    if (!agent) throw new UsageError('say which session');
    const out = output(values.json === true);
    const client = makeClient(values.gateway);
    try {
      const res = (await client.control(agent, what === 'stop' ? 'stop_reminders' : 'resume_reminders')) as { remindersStopped?: boolean };
      out.data(res);
      out.say(`reminders for ${agent} ${res.remindersStopped ? 'stopped' : 'running'}`);
      return 0;
    } finally {
      await client.close();
    }
  });
}

export const GUARD_HELP = `usage: shrooms-agent a2a guard SESSION [--device DEVICE] [--reset] [--json]

The loop guard's window for a device asking SESSION (default: this machine's own device): how many
new tasks it gave the session within the window, the limit (GUARD_RATE_MAX), and when the next one
is admitted. --reset empties the window — for a person locked out while testing; it survives
restarts, as the window lives in the guard's bucket. Owner only, on the session's machine.
`;

export function guardCommand(args: string[]): Promise<number> {
  return run('guard', GUARD_HELP, args, async () => {
    const { values, positionals } = parse(args, { device: { type: 'string' }, reset: { type: 'boolean' } });
    const agent = positionals[0];
    if (!agent) throw new UsageError('say which session');
    const out = output(values.json === true);
    const client = makeClient(values.gateway);
    try {
      const w = await client.guardWindow(agent, {
        ...(values.device ? { device: values.device } : {}),
        ...(values.reset ? { reset: true } : {}),
      });
      out.data(w);
      const wait = Number(w.retryAfterMs ?? 0);
      const reserved = Number(w.reserved ?? 0);
      out.say(
        `${values.reset ? 'reset; ' : ''}${w.device} → ${w.machine}/${w.session}: ${w.count} of ${w.limit} new tasks within ${Math.round(Number(w.windowMs) / 1000)} s` +
          (reserved > 0 ? ` (${reserved} of them places another gateway or guard reserved ahead)` : '') +
          (wait > 0 ? `; the next is admitted in ${Math.ceil(wait / 1000)} s` : '; the next is admitted now'),
      );
      return 0;
    } finally {
      await client.close();
    }
  });
}
