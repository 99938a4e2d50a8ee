/** `get`, `cancel`, `ack`, `update`: one task by name. */
import { UpdateStatusSchema } from '@shrooms/protocol';
import { isTaskName, returnedParts } from '@shrooms/client';
import { makeClient, output, parse, run, seconds, UsageError } from './io.js';
import { progressLine } from './progress.js';
import { explained, printTask, taskJson } from './show.js';

const NAMES = `TASK is MACHINE/SESSION:ID, or SESSION:ID for a session of this machine.`;

function taskArg(positionals: string[], what: string): string {
  const t = positionals[0];
  if (!t) throw new UsageError(`say which task to ${what}`);
  if (!isTaskName(t)) throw new UsageError(`${JSON.stringify(t.slice(0, 80))} is not a task name; write MACHINE/SESSION:ID or SESSION:ID`);
  return t;
}

export const GET_HELP = `usage: shrooms-agent a2a get TASK [--wait [--wait-seconds N]] [--json]

Shows a task: its state and the worker's reply. --wait follows it until it finishes or needs input
(at most --wait-seconds, default 600), with a live progress line on a terminal; Ctrl-C stops the
wait, not the task (exit 130).
${NAMES} Exit 2 when the task failed, was rejected or canceled.
`;

export function getCommand(args: string[]): Promise<number> {
  return run('get', GET_HELP, args, async () => {
    const { values, positionals } = parse(args, { wait: { type: 'boolean' }, 'wait-seconds': { type: 'string' } });
    const name = taskArg(positionals, 'show');
    const waitSeconds = seconds(values['wait-seconds'], 'wait-seconds', 600, 600);
    const out = output(values.json === true);
    const client = makeClient(values.gateway);
    try {
      const ref = await client.taskRef(name);
      const task = await client.get(ref.task);
      if (!values.wait) return printTask(out, task, ref.machine, { summary: await explained(client, task, ref.machine) });
      const line = progressLine(ref.machine, ref.task, { explain: (s) => client.explain(s) });
      try {
        const r = await client.wait(ref.task, { timeoutMs: waitSeconds * 1000, onUpdate: (t) => line.update(t) }, task);
        line.stop();
        return printTask(out, r.task, ref.machine, { waitedOut: !r.settled, summary: await explained(client, r.task, ref.machine) });
      } finally {
        line.stop();
      }
    } finally {
      await client.close();
    }
  });
}

export const CANCEL_HELP = `usage: shrooms-agent a2a cancel TASK [--json]

Cancels an open task (its worker stops). Canceling a canceled task is fine; a finished one is
refused (exit 2). ${NAMES}
`;

export function cancelCommand(args: string[]): Promise<number> {
  return run('cancel', CANCEL_HELP, args, async () => {
    const { values, positionals } = parse(args, {});
    const name = taskArg(positionals, 'cancel');
    const out = output(values.json === true);
    const client = makeClient(values.gateway);
    try {
      const ref = await client.taskRef(name);
      const task = await client.cancel(ref.task);
      printTask(out, task, ref.machine);
      return 0;
    } finally {
      await client.close();
    }
  });
}

export const ACK_HELP = `usage: shrooms-agent a2a ack TASK [--json]

Notes that you have read the answer of a task you asked (bookkeeping: shrooms/acknowledged). It
never closes or reopens the task. ${NAMES}
`;

export function ackCommand(args: string[]): Promise<number> {
  return run('ack', ACK_HELP, args, async () => {
    const { values, positionals } = parse(args, {});
    const name = taskArg(positionals, 'acknowledge');
    const out = output(values.json === true);
    const client = makeClient(values.gateway);
    try {
      const ref = await client.taskRef(name);
      const task = await client.ack(ref.task);
      out.data(taskJson(task, ref.machine));
      out.say(`acknowledged ${ref.task}`);
      return 0;
    } finally {
      await client.close();
    }
  });
}

export const UPDATE_HELP = `usage: shrooms-agent a2a update TASK done|blocked|failed TEXT... [--file PATH]... [--data JSON] [--json]

The worker's task_update: says how a task you were given ended — done with a summary, blocked with
what you need from the asker, failed with why. With done, --file returns a file (at most 64 KiB;
relative to this directory, or any path you can read; repeat for more) and --data a JSON value, in
the answer's artifact beside the summary. Only for tasks of your own session on this machine
(SHROOMS_AGENT_SESSION); anything else is refused (exit 2). ${NAMES}
`;

export function updateCommand(args: string[]): Promise<number> {
  return run('update', UPDATE_HELP, args, async () => {
    const { values, positionals } = parse(args, { file: { type: 'string', multiple: true }, data: { type: 'string' } });
    const name = taskArg(positionals, 'update');
    const status = UpdateStatusSchema.safeParse(positionals[1]);
    if (!status.success) throw new UsageError('the status is done, blocked or failed');
    const text = positionals.slice(2).join(' ');
    if (!text) throw new UsageError('say what happened: update TASK STATUS TEXT...');
    let data: unknown;
    if (values.data !== undefined) {
      try {
        data = JSON.parse(values.data);
      } catch {
        throw new UsageError('--data takes a JSON value');
      }
    }
    if ((values.file?.length || values.data !== undefined) && status.data !== 'done')
      throw new UsageError('--file and --data go with done');
    // Relative to this shell's directory, and not confined to it (task_update's tool is): whoever
    // runs this can read the file anyway — a person in their own shell, or a session's shell tool,
    // which asks the owner first in a session that asks — so a fence here would only get in the
    // way of returning a file from elsewhere on purpose.
    const parts = await returnedParts(values.file, data);
    const out = output(values.json === true);
    const client = makeClient(values.gateway);
    try {
      const ref = await client.taskRef(name);
      const task = await client.update(ref.task, status.data, text, { parts });
      printTask(out, task, ref.machine);
      return 0;
    } finally {
      await client.close();
    }
  });
}
