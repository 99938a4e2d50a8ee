/** How a task reads on a terminal, and its `--json` document. */
import { heldText, replyOf, summarize, type ShroomsClient, type TaskSummary } from '@shrooms/client';
import type { Task } from '@shrooms/protocol';
import { exitForTask, type Out } from './io.js';

/** A task's `--json` document: its summary (`s`, else read from the task), the A2A task beside it. */
export function taskJson(task: Task, machine: string, s: TaskSummary = summarize(task, machine)): TaskSummary & { a2aTask: Task } {
  return { ...s, a2aTask: task };
}

export interface PrintOptions {
  waitedOut?: boolean;
  replyOnly?: boolean;
  /** The task's summary when the caller has more to say than the task holds (what a queued task waits for). */
  summary?: TaskSummary;
}

/** A task's summary with what it waits for when queued (`ShroomsClient.explain`). */
export function explained(client: ShroomsClient, task: Task, machine: string): Promise<TaskSummary> {
  return client.explain(summarize(task, machine));
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
export function printTask(out: Out, task: Task, machine: string, opts: PrintOptions = {}): number {
  const s = opts.summary ?? summarize(task, machine);
  out.data({ ...taskJson(task, machine, s), ...(opts.waitedOut !== undefined ? { waitedOut: opts.waitedOut } : {}) });
  out.say(taskText(s, opts));
  return exitForTask(s);
}

/** The live label of a task being waited on: its state and, when held or noted, why it waits. */
export function waitLabel(s: TaskSummary): string {
  return s.held ? `${s.task} ${heldText(s)}` : `${s.task} ${s.status}${s.note ? ` (${s.note})` : ''}`;
}

export { replyOf };
