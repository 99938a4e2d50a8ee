/**
 * A task as a model or a person reads it: one short paragraph, and a flat summary object for
 * programs (MCP structured content, `--json`). The full A2A task stays available beside it.
 */
import { META, V03_STATES, displayOrigin, isInterrupted, isTerminal, textOf, type Task } from '@shrooms/protocol';
import { z } from 'zod';
import { parseTaskRef } from './refs.js';

export const TaskSummarySchema = z.object({
  /** Whole name, `MACHINE/SESSION:ID`. */
  task: z.string(),
  /** The worker, `MACHINE/SESSION`. */
  agent: z.string(),
  state: z.string(),
  /** Short state: submitted, queued, held, working, input-required, completed, failed, canceled, rejected. */
  status: z.string(),
  /**
   * Held for the owner of the worker session (an agent's task for a session that runs tools without
   * asking): it runs once they release it (`shrooms-agent a2a release TASK` on that machine).
   */
  held: z.boolean(),
  /** What the bridge says of an open task meanwhile (e.g. the model endpoint answers errors). */
  note: z.string().optional(),
  /** Terminal: nothing will change any more. */
  finished: z.boolean(),
  /** The worker (or a permission prompt) waits for an answer: `ask_agent` with `task`. */
  needsInput: z.boolean(),
  /** The worker's words: the summary, what it needs, or why it failed. */
  reply: z.string().optional(),
  /** What was asked (first message). */
  request: z.string().optional(),
  /** Who asked: the verified device, the claimed session beside it (`pi5.home (pi5/jimmy)`). */
  from: z.string().optional(),
  updatedAt: z.string().optional(),
  acknowledged: z.boolean(),
  stalled: z.boolean(),
});
export type TaskSummary = z.infer<typeof TaskSummarySchema>;

export function shortState(task: Pick<Task, 'status' | 'metadata'>): string {
  const s = task.status.state;
  if (s === 'TASK_STATE_SUBMITTED' && task.metadata?.[META.held] === true) return 'held';
  if (s === 'TASK_STATE_SUBMITTED' && task.metadata?.[META.queued] === true) return 'queued';
  return V03_STATES[s] ?? s;
}

/** The worker's last words on the task: the status message, else the newest artifact's text. */
export function replyOf(task: Task): string | undefined {
  const fromStatus = textOf(task.status.message);
  if (fromStatus) return fromStatus;
  const art = task.artifacts?.[task.artifacts.length - 1];
  const fromArtifact = art ? textOf(art) : '';
  return fromArtifact || undefined;
}

export function summarize(task: Task, machine: string): TaskSummary {
  const ref = parseTaskRef(task.id, String(task.metadata?.[META.machine] ?? machine));
  const state = task.status.state;
  const open = state === 'TASK_STATE_SUBMITTED' || state === 'TASK_STATE_WORKING';
  const reply = open ? undefined : replyOf(task);
  const note = open ? textOf(task.status.message) || undefined : undefined;
  const request = textOf(task.history?.[0]) || undefined;
  return {
    task: ref.task,
    agent: ref.name,
    state,
    status: shortState(task),
    finished: isTerminal(state),
    needsInput: isInterrupted(state),
    held: state === 'TASK_STATE_SUBMITTED' && task.metadata?.[META.held] === true,
    ...(reply !== undefined ? { reply } : {}),
    ...(note !== undefined ? { note } : {}),
    ...(request !== undefined ? { request } : {}),
    ...(task.metadata?.[META.device]
      ? { from: displayOrigin(String(task.metadata[META.device]), task.metadata[META.from] ? String(task.metadata[META.from]) : undefined) }
      : {}),
    ...(task.status.timestamp ? { updatedAt: task.status.timestamp } : {}),
    acknowledged: task.metadata?.[META.acknowledged] !== undefined && task.metadata?.[META.acknowledged] !== false,
    stalled: task.metadata?.[META.stalled] !== undefined && task.metadata?.[META.stalled] !== false,
  };
}

/** How to let a held task run: its owner releases it on the worker's machine. */
export function heldText(s: Pick<TaskSummary, 'task' | 'agent'>): string {
  return `held for the owner of ${s.agent}: it runs once they release it (on that machine: shrooms-agent a2a release ${s.task}, or reject it)`;
}

/** One paragraph a model reads first: which task (its name holds the worker's), what state, the reply, and what to do next. */
export function describeTask(s: TaskSummary, opts: { waitedOut?: boolean } = {}): string {
  const head = `Task ${s.task} is ${s.status}${s.stalled ? ' and stalled (no progress after every reminder)' : ''}.`;
  switch (s.status) {
    case 'completed':
      return `${head}\nReply:\n${s.reply ?? '(no text)'}`;
    case 'failed':
    case 'rejected':
    case 'canceled':
      return `${head}${s.reply ? `\nReason: ${s.reply}` : ''}`;
    case 'input-required':
    case 'auth-required':
      return `${head}\nThe worker needs: ${s.reply ?? '(no text)'}\nAnswer with ask_agent, task "${s.task}".`;
    default: {
      const next = opts.waitedOut ? 'The wait ended before it finished; follow it' : 'Follow it';
      const why = s.held ? ` It is ${heldText(s)}.` : s.note ? ` Now: ${s.note.replace(/\.$/, '')}.` : '';
      return `${head}${why} ${next} with task_status, task "${s.task}".`;
    }
  }
}
