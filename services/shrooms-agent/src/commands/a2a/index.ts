/** `shrooms-agent a2a …`: the client of the mesh on the command line (spec §8). */
import type { Command } from '../types.js';
import { listCommand, tasksCommand } from './list.js';
import { scheduleCommand } from './schedule.js';
import { guardCommand, rejectCommand, releaseCommand, remindersCommand } from './control.js';
import { sendCommand } from './send.js';
import { ackCommand, cancelCommand, getCommand, updateCommand } from './tasks.js';

const SUBCOMMANDS: Record<string, { summary: string; run: (args: string[]) => Promise<number> }> = {
  list: { summary: 'the sessions on the mesh now', run: listCommand },
  send: { summary: 'give a session a task (--wait for the answer)', run: sendCommand },
  get: { summary: 'show a task (--wait to follow it)', run: getCommand },
  cancel: { summary: 'cancel an open task', run: cancelCommand },
  ack: { summary: "note that you read a task's answer", run: ackCommand },
  update: { summary: 'finish a task you were given: done | blocked | failed', run: updateCommand },
  tasks: { summary: 'the tasks of a session, newest first', run: tasksCommand },
  schedule: { summary: 'tasks at a time: create | list | cancel', run: scheduleCommand },
  release: { summary: 'let a held task run (owner only)', run: releaseCommand },
  guard: { summary: "see or reset a device's loop-guard window for a session (owner only)", run: guardCommand },
  reject: { summary: 'refuse a held task (owner only)', run: rejectCommand },
  reminders: { summary: "stop or resume a session's reminders (owner only)", run: remindersCommand },
};

export const A2A_HELP = `usage: shrooms-agent a2a <command> [options]   (each command has --help)

The same client the MCP tools use, for people and for agents that prefer a shell.

commands:
${Object.entries(SUBCOMMANDS)
  .map(([n, c]) => `  ${n.padEnd(9)} ${c.summary}`)
  .join('\n')}

Names: agents are MACHINE/SESSION (or SESSION of this machine); tasks MACHINE/SESSION:ID (or
SESSION:ID). Every command takes --json (for scripts) and --gateway URL.
Environment: SHROOMS_GATEWAY_URL (this machine's gateway, default http://127.0.0.1:7387),
SHROOMS_AGENT_SESSION (who asks), SHROOMS_TASK_ID and TRACEPARENT (inside a task), SHROOMS_GATEWAYS
(MACHINE=URL,… for other machines). Schedules go through the gateway too.
Exit codes: 0 ok (an act that was done — cancel, release, reject, update, ack — is 0 whatever state
it leaves), 1 usage or connection error or a name that does not exist, 2 the task shown or waited
for (send, get) failed, was rejected or canceled, or the act was refused, 130 a wait stopped by
Ctrl-C (the task goes on).
`;

export const a2aCommand: Pick<Command, 'run'> = {
  async run(args) {
    const [sub, ...rest] = args;
    if (!sub || sub === '--help' || sub === '-h' || sub === 'help') {
      process.stdout.write(A2A_HELP);
      return sub ? 0 : 1;
    }
    const cmd = SUBCOMMANDS[sub];
    if (!cmd) {
      process.stderr.write(
        `shrooms-agent a2a: unknown command ${JSON.stringify(sub)}; one of ${Object.keys(SUBCOMMANDS).join(', ')} (see --help)\n`,
      );
      return 1;
    }
    return cmd.run(rest);
  },
};
