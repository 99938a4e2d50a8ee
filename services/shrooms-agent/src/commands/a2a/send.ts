import { readFileSync } from 'node:fs';
import { DEFAULT_WAIT_MS } from '@shrooms/client';
import { exitForTask, makeClient, output, parse, run, seconds, UsageError } from './io.js';
import { progressLine } from './progress.js';
import { explained, printTask } from './show.js';

export const SEND_HELP = `usage: shrooms-agent a2a send TO TEXT... [--wait [--wait-seconds N]] [--json]
       shrooms-agent a2a send --task TASK TEXT... [--wait]     answer a task that needs input

Gives the session TO (MACHINE/SESSION, or SESSION of this machine or the one name list shows) a
task. Without --wait prints the task name (MACHINE/SESSION:ID) at once; with --wait follows the
task and prints the reply — or, after --wait-seconds (default 600), the task as it stands — with
a live progress line on a terminal. TEXT "-" reads the text from stdin.

  --wait               wait for the answer
  --wait-seconds N     how long to wait (0–600, default 600)
  --task TASK          answer this blocked task (MACHINE/SESSION:ID) instead of asking a new one
  --id ID              your own message id (a resend with the same id is the same task)
  --json               print the task as JSON
  --gateway URL        this machine's gateway (default SHROOMS_GATEWAY_URL or http://127.0.0.1:7387)

Who asks: SHROOMS_AGENT_SESSION (SESSION or MACHINE/SESSION); inside a task, SHROOMS_TASK_ID
and TRACEPARENT. Exit 0 ok (also still open or needing input), 1 usage/connection, 2 failed,
rejected or canceled task, or a refusal (loop guard, chain, allow-list), 130 when Ctrl-C stopped
the wait (the task goes on: follow it with get --wait).
`;

export function sendCommand(args: string[]): Promise<number> {
  return run('send', SEND_HELP, args, async () => {
    const { values, positionals } = parse(args, {
      wait: { type: 'boolean' },
      'wait-seconds': { type: 'string' },
      task: { type: 'string' },
      id: { type: 'string' },
    });
    const [first, ...rest] = positionals;
    const to = values.task ? undefined : first;
    const words = values.task ? positionals : rest;
    if (!values.task && !to) throw new UsageError('say who to ask: send TO TEXT...');
    let text = words.join(' ');
    if (text === '-') text = readFileSync(0, 'utf8').trimEnd();
    if (!text) throw new UsageError('the task needs text');
    const waitSeconds = seconds(values['wait-seconds'], 'wait-seconds', DEFAULT_WAIT_MS / 1000, 600);
    const out = output(values.json === true);
    const client = makeClient(values.gateway);
    try {
      const sent = await client.send({ to, text, task: values.task, messageId: values.id, idPrefix: 'cli' });
      if (!values.wait) {
        if (out.json) return printTask(out, sent.task, sent.ref.machine, { summary: await explained(client, sent.task, sent.ref.machine) });
        out.say(sent.ref.task);
        // A resend of a message whose task already ended is that task: its end decides, as with --json.
        return exitForTask({ state: sent.task.status.state });
      }
      const line = progressLine(sent.ref.machine, sent.ref.task, { explain: (s) => client.explain(s) });
      let r;
      try {
        r = await client.wait(sent.ref.task, { timeoutMs: waitSeconds * 1000, onUpdate: (t) => line.update(t) }, sent.task);
      } finally {
        line.stop();
      }
      const summary = await explained(client, r.task, sent.ref.machine);
      return printTask(out, r.task, sent.ref.machine, { waitedOut: !r.settled, replyOnly: true, summary });
    } finally {
      await client.close();
    }
  });
}
