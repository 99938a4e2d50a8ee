/**
 * Who may do what (docs/security.md): one rule per action, and the only place the gateway decides
 * it. The device is what the mesh proves (the source address); `from` is a claim and decides nothing
 * here except which of this machine's own sessions is speaking for `update`.
 *
 *   action             who may
 *   read               any device of the mesh (GetTask, ListTasks, SubscribeToTask, ListSchedules, the dashboard)
 *   list_agents        any device of the mesh (/agents, cards, the dashboard's agents)
 *   send               any device of the mesh (a new task, a schedule); the guard decides the rest
 *   send_scheduled     a new task with a scheduler's message id (`sched-…`): only a machine that
 *                      runs a scheduler, with an occurrence or result its schedule stands at
 *   cancel             the device that asked for the task, or the session owner's machine
 *   answer             the device that asked for the task, or the owner's machine (INPUT_REQUIRED)
 *   answer_permission  only the session owner's machine (a permission prompt of the worker)
 *   ack                the device that asked for the task, or the owner's machine
 *   release | reject   only the session owner's machine (a held task)
 *   control            only the session owner's machine (reminders)
 *   update             only the worker session itself, on this machine (task_update)
 *
 * Every door calls `authorize` with its action: the A2A methods through TaskService, the cards and
 * `/agents` with `list_agents`, the dashboard's reads with `read` and its actions through TaskService
 * with the viewer as the caller. An unnamed source never gets this far: every route but health
 * refuses it (doors/).
 */
import { META, SCHEDULED_MESSAGE_ID_PREFIX, ShroomsError, parseAgent, type Task } from '@shrooms/protocol';
import type { Caller } from '../tasks/caller.js';

export type Action =
  | 'read'
  | 'list_agents'
  | 'send'
  | 'send_scheduled'
  | 'cancel'
  | 'answer'
  | 'answer_permission'
  | 'ack'
  | 'release'
  | 'reject'
  | 'control'
  | 'update';

/**
 * What a rule may look at: the caller, the machine (and session) acted on, and for task actions the
 * task. Without a session the act is about the machine (its card, its agents, its dashboard).
 */
export interface Target {
  machine: string;
  session?: string;
  task?: Pick<Task, 'id' | 'status' | 'metadata'>;
  /**
   * For `send_scheduled`: the schedule's record stands at the request (an occurrence or a result)
   * and the caller's machine runs a scheduler (tasks/scheduled.ts).
   */
  proven?: boolean;
}

export interface Rule {
  /** Who may, in words (error messages and docs/security.md). */
  who: string;
  /** What the action is, in words, when its name does not say it. */
  does?: string;
  allows(caller: Caller, target: Target): boolean;
}

// One rule object per action (made by these factories), so that no two actions share one by
// accident and a test can turn one action's rule around without touching another's.
// The door (doors/) has named the device from the source address before any route runs; a caller
// always carries it. The rule still says so, so that a Caller made without one is refused too.
const anyDevice = (): Rule => ({ who: 'any device of the mesh', allows: (c) => c.device.length > 0 });
const owner = (): Rule => ({ who: "the session owner's machine", allows: (c) => c.self });
const askerOrOwner = (): Rule => ({
  who: "the device that asked for the task, or the session owner's machine",
  allows: (c, t) => c.self || (t.task !== undefined && askedBy(t.task) === c.device),
});

export const RULES: Readonly<Record<Action, Rule>> = {
  read: anyDevice(),
  list_agents: anyDevice(),
  send: anyDevice(),
  send_scheduled: {
    who: 'the scheduler, from a machine that runs one and with an occurrence or result its schedule stands at,',
    does: `send a message id starting with ${SCHEDULED_MESSAGE_ID_PREFIX} to`,
    allows: (_c, t) => t.proven === true,
  },
  cancel: askerOrOwner(),
  answer: askerOrOwner(),
  answer_permission: owner(),
  ack: askerOrOwner(),
  release: owner(),
  reject: owner(),
  control: owner(),
  update: {
    who: 'the worker session itself, on its own machine',
    allows: (c, t) => {
      const claimed = c.from ? parseAgent(c.from) : undefined;
      return c.self && !!claimed && claimed.session === t.session && (claimed.machine === undefined || claimed.machine === t.machine);
    },
  },
};

/** The verified device that asked for a task (written by the gateway when it took the task). */
export function askedBy(task: Pick<Task, 'metadata'>): string | undefined {
  const d = task.metadata?.[META.device];
  return typeof d === 'string' ? d : undefined;
}

/** Whether a task waits on a permission prompt of its worker (not on an answer to `blocked`). */
export function waitsOnPermission(task: Pick<Task, 'status' | 'metadata'>): boolean {
  return task.status.state === 'TASK_STATE_INPUT_REQUIRED' && task.metadata?.[META.permission] !== undefined;
}

/** Throws ACTION_FORBIDDEN unless the rule for `action` lets `caller` do it. */
export function authorize(action: Action, caller: Caller, target: Target): void {
  const rule = RULES[action];
  if (rule.allows(caller, target)) return;
  const where = target.session ? `${target.machine}/${target.session}` : target.machine;
  const what = target.task ? `task ${target.task.id} of ${where}` : where;
  const who = caller.from ? `${caller.device} (${caller.from})` : caller.device;
  // task_update keeps its own code (clients and tests already know it); every other rule shares one.
  throw new ShroomsError(
    action === 'update' ? 'UPDATE_FORBIDDEN' : 'ACTION_FORBIDDEN',
    `only ${rule.who} may ${rule.does ?? action.replace('_', ' ')} ${what}; this is ${who}`,
    {
      action,
      rule: rule.who,
      device: caller.device,
    },
  );
}
