/**
 * What the dashboard shows of a task: a small row (bounded strings, no bodies) for lists, chains and
 * live updates, and a bounded detail for the one task a person opens. Both are made from the ledger
 * entry alone. Every string here is user input to the page: the page renders it as text, never HTML.
 */
import {
  META,
  StringPool,
  isTerminal,
  keys,
  ownString,
  parseTaskName,
  taskOfKey,
  type Message,
  type Task,
  type TaskState,
} from '@shrooms/protocol';
import { storedLater, type Stored } from '@shrooms/ledger';
import { displayOrigin } from '@shrooms/protocol';
import type { TaskState as PageTaskState, TaskDetailView, TaskRowView } from './wire.js';

/** The page's copy of the task states (wire.ts) is the protocol's: this fails to compile when they part. */
const _sameStates: [TaskState, PageTaskState] extends [PageTaskState, TaskState] ? true : never = true;

/** Longest text a row carries (characters); the detail carries more. */
export const ROW_TEXT_MAX = 240;
/** The detail shows the last this many messages of a task's history. */
export const DETAIL_MESSAGES_MAX = 50;
/** Longest message text the detail carries (characters). */
export const DETAIL_TEXT_MAX = 16_000;

/** The row the page reads (wire.ts: what each field is), and what the server keeps beside it. */
export interface TaskRow extends TaskRowView {
  session: string;
  state: TaskState;
  /** The claimed session the task came from (`from` shows it beside the device). */
  claimed?: string;
  /**
   * How much later than its status time the ledger last stored the task, whole seconds (an ack writes
   * a finished task again; 0 nearly always): the ledger keeps it from then (@shrooms/ledger `keptFrom`).
   */
  storedLaterS: number;
}

/** The page's task detail with the server's row (`historyOmitted`: messages older than the last DETAIL_MESSAGES_MAX). */
export interface TaskDetail extends Omit<TaskDetailView, 'row'> {
  row: TaskRow;
}

export function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** One line: control characters (newlines included) become spaces. */
function line(s: string, max = ROW_TEXT_MAX): string {
  // eslint-disable-next-line no-control-regex
  return clip(s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim(), max);
}

export function textOf(m: Message | undefined): string {
  return (m?.parts ?? []).map((p) => (typeof p.text === 'string' ? p.text : '')).join('\n');
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** `M.S.K` → machine and session, or undefined for keys that are not tasks (e.g. health probes). */
export function parseKey(key: string): { machine: string; session: string } | undefined {
  const k = taskOfKey(key);
  return k && { machine: k.machine, session: k.session };
}

/** The ledger key a `shrooms/parent` name points at. */
export function keyOfName(name: string): string | undefined {
  const p = parseTaskName(name);
  if (!p?.machine) return undefined;
  try {
    return keys.task(p.machine, p.session, p.messageId);
  } catch {
    return undefined;
  }
}

/**
 * The texts rows of many tasks repeat (states; machine, session and device names), one copy each: the
 * board keeps a row for every task the ledger retains while a page is open (dashboard-memory.test.ts).
 */
const shared = new StringPool();

export function toRow(s: Stored): TaskRow | undefined {
  const where = parseKey(s.key);
  const task = s.entry?.task as Task | undefined;
  if (!where || !task?.id || !task.status?.state) return undefined;
  const md = task.metadata ?? {};
  const device = str(md[META.device]) ?? 'unknown device';
  const claimed = str(md[META.from]);
  const schedule = str(md[META.schedule]);
  const parent = str(md[META.parent]);
  const statusAt = Date.parse(task.status.timestamp ?? '') || 0;
  const state = task.status.state;
  // A working task's status message is what its bridge says meanwhile (the model endpoint failing, a
  // turn that ended without task_update): shown where a result would be.
  const showResult =
    isTerminal(state) || state === 'TASK_STATE_INPUT_REQUIRED' || state === 'TASK_STATE_AUTH_REQUIRED' || state === 'TASK_STATE_WORKING';
  const result = showResult ? line(textOf(task.status.message)) : '';
  const lastWorkerLine = str(md[META.lastWorkerLine]);
  const parentKey = parent ? keyOfName(parent) : undefined;
  return {
    // A string of its own: the key the watch brings is cut from its message's subject (keeping it all).
    key: ownString(s.key),
    name: `${where.machine}/${task.id}`,
    id: task.id,
    machine: shared.share(where.machine),
    session: shared.share(where.session),
    to: shared.share(`${where.machine}/${where.session}`),
    state: shared.share(state),
    open: !isTerminal(state),
    from: shared.share(displayOrigin(device, claimed)),
    device: shared.share(line(device, 130)),
    ...(claimed ? { claimed: shared.share(line(claimed, 130)) } : {}),
    origin: schedule ? 'schedule' : claimed ? 'agent' : 'person',
    ...(schedule ? { schedule: line(schedule, 130) } : {}),
    text: line(textOf(task.history?.[0])),
    ...(lastWorkerLine ? { lastWorkerLine: line(lastWorkerLine) } : {}),
    ...(result ? { result } : {}),
    queued: md[META.queued] === true,
    held: md[META.held] === true,
    ...(str(md[META.stalled]) ? { stalled: str(md[META.stalled]) } : {}),
    nudges: Number(md[META.nudges]) || 0,
    acknowledged: md[META.acknowledged] !== undefined && md[META.acknowledged] !== false,
    expired: md[META.expired] !== undefined,
    ...(parent ? { parent: line(parent, 300) } : {}),
    ...(parentKey ? { parentKey } : {}),
    depth: Number(md[META.depth]) || 0,
    createdAt: Date.parse(String(md[META.createdAt] ?? '')) || statusAt,
    statusAt,
    storedLaterS: storedLater(statusAt, s.storedAt ?? 0),
    v: s.entry.v,
  };
}

function metaValue(v: unknown): string {
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  return clip(s, 2000);
}

export function toDetail(s: Stored): TaskDetail | undefined {
  const row = toRow(s);
  if (!row) return undefined;
  const task = s.entry.task;
  const history = task.history ?? [];
  const shown = history.slice(-DETAIL_MESSAGES_MAX);
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(task.metadata ?? {}).slice(0, 100)) metadata[clip(k, 200)] = metaValue(v);
  return {
    row,
    contextId: task.contextId,
    metadata,
    history: shown.map((m) => ({
      role: m.role === 'ROLE_AGENT' ? 'agent' : m.role === 'ROLE_USER' ? 'user' : 'unknown',
      messageId: clip(m.messageId, 200),
      ...(str(m.metadata?.at) ? { at: String(m.metadata!.at) } : {}),
      text: clip(textOf(m), DETAIL_TEXT_MAX),
    })),
    historyOmitted: history.length - shown.length,
    status: {
      state: task.status.state,
      ...(task.status.timestamp ? { at: task.status.timestamp } : {}),
      ...(task.status.message ? { text: clip(textOf(task.status.message), DETAIL_TEXT_MAX) } : {}),
    },
    artifacts: (task.artifacts ?? [])
      .slice(0, 20)
      .map((a) => ({ name: clip(a.name ?? a.artifactId, 200), text: clip(a.parts.map((p) => p.text ?? '').join('\n'), DETAIL_TEXT_MAX) })),
  };
}
