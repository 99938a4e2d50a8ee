/**
 * The permission relay (Claude Code, ACP agents): a prompt of the harness shows as the current task
 * going INPUT_REQUIRED with the question (spec §5); the owner's answer to that task goes back to the
 * prompt, and the task works on. A task shows one question at a time: prompts asked while one is
 * shown (tool calls run side by side) wait, and each is shown once the one before is answered.
 */
import { META, ShroomsError, textOf, type DeliverRequest, type Message } from '@shrooms/protocol';
import { localTaskKey, transitions, type LedgerEntry, type Stored } from '@shrooms/ledger';
import type { PermissionRequest } from '../harness/types.js';
import type { Core } from './core.js';
import { parsePermissionAnswer } from './permission-answer.js';

const INPUT_CHARS = 500;
const AGAIN_TEXT = 'that is not an answer: reply exactly "allow" or "deny". ';
const AGAIN = /^that is not an answer: reply exactly "allow" or "deny"\. /;

export class PermissionRelay {
  /** The prompt the current task shows, and those of the same task waiting to be shown after it. */
  private shown?: { key: string; id: string };
  private queued: { key: string; req: PermissionRequest }[] = [];

  constructor(private readonly c: Core) {}

  /** A prompt from the harness; with no task at hand it is denied at once. Run under the lock. */
  async ask(req: PermissionRequest): Promise<void> {
    const cur = this.c.view.current;
    if (!cur) {
      this.c.harness().answerPermission(req.id, false);
      return;
    }
    if (this.shown?.key === cur.key) {
      this.queued.push({ key: cur.key, req });
      this.c.log.info({ task_id: cur.taskId, tool: req.tool }, 'permission prompt waits for the one shown to be answered');
      return;
    }
    await this.show(cur.key, cur.taskId, req);
  }

  /**
   * Shows a prompt on its task. One the ledger would not take is denied at once: unseen by the
   * owner it could never be answered, and the session would wait on it for good.
   */
  private async show(key: string, taskId: string, req: PermissionRequest): Promise<Stored | undefined> {
    const input = JSON.stringify(req.input ?? {}).slice(0, INPUT_CHARS);
    const question = `permission needed: the session wants to run ${req.tool} ${input}. Answer "allow" or "deny".`;
    let stored: Stored;
    try {
      stored = await this.c.ledger.transition(key, (e) =>
        transitions.block(e, question, new Date(), { [META.permission]: { id: req.id, tool: req.tool } }),
      );
    } catch (err) {
      this.c.harness().answerPermission(req.id, false);
      this.c.log.warn({ err, task_id: taskId, tool: req.tool }, 'could not show a permission prompt on its task; denied it');
      return undefined;
    }
    this.shown = { key, id: req.id };
    this.c.log.info({ task_id: taskId, tool: req.tool }, 'permission prompt relayed as input-required');
    return stored;
  }

  /** After an answer: the next prompt waiting on the same task, if any, is shown (returned as stored). */
  private async next(key: string, taskId: string): Promise<Stored | undefined> {
    this.shown = undefined;
    this.queued = this.queued.filter((q) => q.key === key && this.c.view.isCurrent(key));
    for (let q = this.queued.shift(); q; q = this.queued.shift()) {
      const shown = await this.show(key, taskId, q.req);
      if (shown) return shown;
    }
    return undefined;
  }

  /**
   * The harness has no prompt open (its state left `waiting`: all answered, withdrawn, or its turn
   * or process gone): nothing is shown or waits any more, and the next prompt is shown at once.
   */
  noneOpen(): void {
    this.shown = undefined;
    this.queued = [];
  }

  /**
   * A message for an existing task: if that task is the current one and waits on a prompt, the
   * message answers the prompt (returns the task as stored); otherwise undefined. Run under the lock.
   */
  async answer(req: DeliverRequest & { taskId: string }): Promise<Stored | undefined> {
    const key = localTaskKey(this.c.ledger, this.c.machine, this.c.session, req.taskId);
    // Only the current task can wait on a prompt: any other answer is intake's, without a read here.
    if (!this.c.view.isCurrent(key)) return undefined;
    const cur = await this.c.ledger.get(key);
    const pending = cur?.entry.task.metadata?.[META.permission] as { id?: string; tool?: string } | undefined;
    if (!cur || cur.entry.task.status.state !== 'TASK_STATE_INPUT_REQUIRED' || !pending?.id) return undefined;
    // Only the session owner's machine answers its prompts (the gateway refuses others first).
    if (req.origin.device !== this.c.machine)
      throw new ShroomsError('ACTION_FORBIDDEN', `only ${this.c.machine} itself may answer a permission prompt of its sessions`, {
        action: 'answer_permission',
        rule: "the session owner's machine",
      });
    const now = new Date();
    const answer = parsePermissionAnswer(req.message);
    const by = req.origin.from ? `${req.origin.device} (${req.origin.from})` : req.origin.device;
    if (!answer) {
      const stored = await this.c.ledger.transition(key, (e) => askAgain(e, req.message, now));
      this.c.log.info({ task_id: cur.entry.task.id, by }, 'not an answer to the permission prompt; asked again');
      return stored;
    }
    const record = { answer, tool: pending.tool ?? '', by, at: now.toISOString() };
    const stored = await this.c.ledger.transition(key, (e) => resumeWorking(e, req.message, now, record));
    this.c.harness().answerPermission(pending.id, answer === 'allow');
    this.c.log.info({ task_id: cur.entry.task.id, answer, by }, 'permission prompt answered');
    return (await this.next(key, cur.entry.task.id)) ?? stored;
  }
}

/** INPUT_REQUIRED (a permission prompt) → WORKING with the answer in the history and on the task. */
function resumeWorking(e: LedgerEntry, message: Message, now: Date, record: Record<string, string>): LedgerEntry {
  const task = structuredClone(e.task);
  task.status = { state: 'TASK_STATE_WORKING', timestamp: now.toISOString() };
  task.history = [...(task.history ?? []), { ...message, taskId: task.id, contextId: task.contextId }];
  task.metadata = { ...task.metadata, [META.permissionAnswer]: record };
  delete task.metadata[META.permission];
  return { v: e.v + 1, task, events: [{ statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } }] };
}

/** Not `allow` or `deny`: the message goes into the history and the prompt is asked again. */
function askAgain(e: LedgerEntry, message: Message, now: Date): LedgerEntry {
  const task = e.task;
  const withMessage = {
    ...e,
    task: { ...task, history: [...(task.history ?? []), { ...message, taskId: task.id, contextId: task.contextId }] },
  };
  const original = textOf(task.status.message).replace(AGAIN, '');
  const question = `${AGAIN_TEXT}${original}`.slice(0, 2_000);
  return transitions.block(withMessage, question, now, { [META.permission]: task.metadata?.[META.permission] });
}
