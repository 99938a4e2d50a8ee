/**
 * Every NATS subject, stream and KV bucket of the mesh, built here and nowhere else.
 *
 * Grammar (M = machine, S = session, both encoded with `encodeToken`; K = task key):
 *
 *   shrooms.bridge.M.S.deliver    request  gateway → bridge: a new task or an answer to a blocked one
 *                                         (a quiet new task the bridge stores gets no reply: the gateway sees it stored)
 *   shrooms.bridge.M.S.cancel     request  gateway → bridge: cancel a task (reaches the harness)
 *   shrooms.bridge.M.S.update     request  worker tools → bridge: task_update (done|blocked|failed)
 *   shrooms.bridge.M.S.control    request  owner → bridge: release|reject a held task, stop|resume reminders
 *   shrooms.guard.admit           request  gateway → guard (queue group): may this new task be admitted?
 *   shrooms.guard.control         request  owner → guard: allow-lists, counters
 *   shrooms.sched.create|list|cancel  request  → scheduler (queue group)
 *   shrooms.signal.M.S            publish  bridge: live activity pulses (core NATS, never stored)
 *   shrooms.notify.M.S.KIND       publish  bridge: owner notifications (KIND = stalled | held | expired | reminder)
 *   shrooms.refusal.M.S           publish  guard: a refusal (loop guard, chain, allow-list), for the dashboard
 *
 * Stores (JetStream):
 *   KV shrooms_tasks      the ledger; key M.S.K (K = encoded message id); one value per state change,
 *                         the task as it now stands. Stream KV_shrooms_tasks, subjects $KV.shrooms_tasks.>
 *   KV shrooms_signals    the signal field; key M.S; bucket TTL makes unrenewed signals fade
 *   KV shrooms_guard      loop-guard windows; key rate.D.M.S and budget.D.M.S (D = device)
 *   KV shrooms_guard_policy  allow-list rules set through the guard's control endpoint; key M.S (S may be `*`)
 *   KV shrooms_schedules  schedules; key = schedule id; and `_schedulers.M`: machine M runs a scheduler
 *                         (written by each replica; what lets M send a schedule's occurrences)
 *
 * No service subject starts with `$KV.` or sits under a stream's subjects, so JetStream never
 * answers a service request (it would ack it instead).
 */
import { decodeToken, encodeToken } from './names.js';

export const ROOT = 'shrooms';

export const BUCKETS = {
  tasks: 'shrooms_tasks',
  signals: 'shrooms_signals',
  guard: 'shrooms_guard',
  guardPolicy: 'shrooms_guard_policy',
  schedules: 'shrooms_schedules',
} as const;

export const SERVICE_NAMES = {
  gateway: 'shrooms-gateway',
  bridge: 'shrooms-bridge',
  guard: 'shrooms-guard',
  scheduler: 'shrooms-scheduler',
} as const;

export const QUEUE_GROUPS = {
  guard: 'shrooms-guard',
  scheduler: 'shrooms-scheduler',
} as const;

export type BridgeOp = 'deliver' | 'cancel' | 'update' | 'control';
export type NotifyKind = 'stalled' | 'held' | 'expired' | 'reminder';

const t = encodeToken;

export const subjects = {
  bridgeRoot: (machine: string, session: string) => `${ROOT}.bridge.${t(machine)}.${t(session)}`,
  bridge: (machine: string, session: string, op: BridgeOp) => `${ROOT}.bridge.${t(machine)}.${t(session)}.${op}`,
  /** Every bridge endpoint of one machine (permissions). */
  bridgesOfMachine: (machine: string) => `${ROOT}.bridge.${t(machine)}.>`,
  /**
   * Reply inbox prefix of one machine's bridges, or of one session's bridge (under its machine's):
   * connect option `inboxPrefix`; permissions scope replies per machine or per session.
   */
  bridgeInbox: (machine: string, session?: string) => `_INBOX_bridge.${t(machine)}${session ? `.${t(session)}` : ''}`,
  guardAdmit: () => `${ROOT}.guard.admit`,
  guardControl: () => `${ROOT}.guard.control`,
  scheduler: (op: 'create' | 'list' | 'cancel') => `${ROOT}.sched.${op}`,
  signal: (machine: string, session: string) => `${ROOT}.signal.${t(machine)}.${t(session)}`,
  signalsAll: () => `${ROOT}.signal.>`,
  notify: (machine: string, session: string, kind: NotifyKind) => `${ROOT}.notify.${t(machine)}.${t(session)}.${kind}`,
  notifyAll: () => `${ROOT}.notify.>`,
  refusal: (machine: string, session: string) => `${ROOT}.refusal.${t(machine)}.${t(session)}`,
  refusalsAll: () => `${ROOT}.refusal.>`,
} as const;

/** Where the schedules bucket says which machines run a scheduler: `_schedulers.MACHINE`. */
const SCHEDULERS_PREFIX = '_schedulers.';

/** KV keys (each token encoded; `.` separates tokens as in subjects). */
export const keys = {
  task: (machine: string, session: string, messageId: string) => `${t(machine)}.${t(session)}.${t(messageId)}`,
  tasksOfSession: (machine: string, session: string) => `${t(machine)}.${t(session)}.>`,
  tasksOfMachine: (machine: string) => `${t(machine)}.>`,
  signal: (machine: string, session: string) => `${t(machine)}.${t(session)}`,
  rate: (device: string, machine: string, session: string) => `rate.${t(device)}.${t(machine)}.${t(session)}`,
  budget: (device: string, agent: string) => `budget.${t(device)}.${t(agent)}`,
  policy: (machine: string, session: string) => `${t(machine)}.${t(session)}`,
  schedule: (id: string) => t(id),
  /** Machine M runs a scheduler replica. Never a schedule's key: that is one token, this is two. */
  schedulerMachine: (machine: string) => `${SCHEDULERS_PREFIX}${t(machine)}`,
} as const;

/**
 * The task a `keys.task` key names, its tokens decoded; undefined for any other key (a health
 * probe's `_health.M.N`, a key of the wrong shape or with a bad escape).
 */
export function taskOfKey(key: string): { machine: string; session: string; messageId: string } | undefined {
  if (key.startsWith('_')) return undefined;
  const t = key.split('.');
  if (t.length !== 3 || t.some((x) => x.length === 0)) return undefined;
  try {
    return { machine: decodeToken(t[0]!), session: decodeToken(t[1]!), messageId: decodeToken(t[2]!) };
  } catch {
    return undefined;
  }
}

/** "no task SESSION:ID on MACHINE/SESSION", as a caller names it, for the task a ledger key names. */
export function noTaskMessage(key: string): string {
  const k = taskOfKey(key);
  return k ? `no task ${k.session}:${k.messageId} on ${k.machine}/${k.session}` : `no task ${key}`;
}

/** The machine a `keys.schedulerMachine` key names; undefined for any other key. */
export function machineOfSchedulerKey(key: string): string | undefined {
  if (!key.startsWith(SCHEDULERS_PREFIX)) return undefined;
  try {
    return decodeToken(key.slice(SCHEDULERS_PREFIX.length));
  } catch {
    return undefined;
  }
}

/** The subject a KV put is published on, for live watchers over core NATS. */
export function kvSubject(bucket: string, key: string): string {
  return `$KV.${bucket}.${key}`;
}
