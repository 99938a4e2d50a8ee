/** How a task reads on a terminal, and its `--json` document. */
import { heldText, replyOf, summarize, type TaskSummary } from '@shrooms/client';
import type { Task } from '@shrooms/protocol';
import { exitForTask, type Out } from './io.js';

export function taskJson(task: Task, machine: string, extra: Record<string, unknown> = {}): TaskSummary & Record<string, unknown> {
  return { ...summarize(task, machine), ...extra, a2aTask: task };
}

/** The human text of a task after a wait (or a look), for people and shell-minded agents. */
export function taskText(s: TaskSummary, opts: { waitedOut?: boolean; replyOnly?: boolean } = {}): string {
  switch (s.status) {
    case 'completed':
      return opts.replyOnly ? (s.reply ?? '') : `${s.task} completed\n${s.reply ?? ''}`;
    case 'failed':
    case 'rejected':
    case 'canceled':
      return `${s.task} ${s.status}${s.reply ? `: ${s.reply}` : ''}`;
    case 'input-required':
    case 'auth-required':
      return `${s.task} needs input: ${s.reply ?? ''}\nanswer it: shrooms-agent a2a send --task ${s.task} "…"`;
    default: {
      const now = s.held ? `\n${heldText(s)}` : s.note ? `\n${s.note}` : '';
      return opts.waitedOut
        ? `${s.task} is still ${s.status}; follow it: shrooms-agent a2a get ${s.task} --wait${now}`
        : `${s.task} ${s.status}${s.stalled ? ' (stalled)' : ''}${s.from ? `, asked by ${s.from}` : ''}${now}`;
    }
  }
}

/** Prints a task (human or JSON) and returns the exit code its state means. */
export function printTask(out: Out, task: Task, machine: string, opts: { waitedOut?: boolean; replyOnly?: boolean } = {}): number {
  const s = summarize(task, machine);
  out.data(taskJson(task, machine, opts.waitedOut !== undefined ? { waitedOut: opts.waitedOut } : {}));
  out.say(taskText(s, opts));
  return exitForTask(s);
}

/** The live label of a task being waited on: its state and, when held or noted, why it waits. */
export function waitLabel(s: TaskSummary): string {
  return s.held ? `${s.task} ${heldText(s)}` : `${s.task} ${s.status}${s.note ? ` (${s.note})` : ''}`;
}

export { replyOf };
