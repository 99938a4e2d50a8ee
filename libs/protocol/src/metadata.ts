/** Task metadata keys of the shrooms task extension (spec §5). */
export const EXTENSION_URI = 'https://shrooms.mesh/a2a/ext/task/v1';

export const META = {
  session: 'shrooms/session',
  from: 'shrooms/from',
  device: 'shrooms/device',
  queued: 'shrooms/queued',
  /**
   * On a task an answer queued again (it was INPUT_REQUIRED or AUTH_REQUIRED): the answer's message
   * id, until its session takes it up — that turn is the answer, not the task anew.
   */
  answer: 'shrooms/answer',
  nudges: 'shrooms/nudges',
  lastNudge: 'shrooms/last_nudge',
  stalled: 'shrooms/stalled',
  expired: 'shrooms/expired',
  acknowledged: 'shrooms/acknowledged',
  lastWorkerLine: 'shrooms/last_worker_line',
  parent: 'shrooms/parent',
  depth: 'shrooms/depth',
  held: 'shrooms/held',
  /** The chain of sessions from the root, `MACHINE/SESSION` each (for cycle checks). */
  chain: 'shrooms/chain',
  /** W3C trace context of the task. */
  traceparent: 'shrooms/traceparent',
  /** Schedule that produced the task, and the occurrence it stands for. */
  schedule: 'shrooms/schedule',
  occurrence: 'shrooms/occurrence',
  scheduledBy: 'shrooms/scheduled_by', // worker header line: `scheduled by DEVICE (MACHINE/SESSION) for Mon 12 Oct 2026 08:00 (Europe/Berlin)`
  replyTo: 'shrooms/reply_to', // `MACHINE/SESSION` a scheduled task's result is sent back to
  /** A2A SendMessage metadata that creates a schedule instead of a task. */
  at: 'shrooms/at',
  repeat: 'shrooms/repeat',
  /** Whether a permission prompt is what the task waits on. */
  permission: 'shrooms/permission',
  /** How the last permission prompt was answered: `{ answer: allow|deny, tool, by, at }`. */
  permissionAnswer: 'shrooms/permission_answer',
  machine: 'shrooms/machine',
  createdAt: 'shrooms/created_at',
  canceledBy: 'shrooms/canceled_by',
  /** How many times the bridge delivered the task again after its harness died on it. */
  redeliveries: 'shrooms/redeliveries',
  /** On a task delivered again into a new conversation: why the earlier one could not be continued. */
  conversationLost: 'shrooms/conversation_lost',
  /** When the watchdog reminded the worker of the task in the last hour (ms since the epoch each). */
  nudgeLog: 'shrooms/nudge_log',
  /** Why a task was canceled when it was not asked for by hand: `its parent MACHINE/SESSION:ID was canceled`. */
  cancelReason: 'shrooms/cancel_reason',
  /** The tasks a worker asked (`ask_agent`) while working on this one, `MACHINE/SESSION:ID` each: canceled with it. */
  children: 'shrooms/children',
} as const;
