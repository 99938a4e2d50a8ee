/**
 * What the dashboard's page reads from its gateway: the JSON of `/dashboard/api/*` and the events of
 * `/dashboard/events`. Types only and no imports, so both programs hold it: the page's (app/, DOM
 * lib) reads these shapes, and the server's routes and feed are checked against them (`satisfies`
 * and the typed broadcast), so a change on one side that the other does not follow fails to compile.
 */

/** The A2A task states (the protocol's TASK_STATES; rows.ts checks the two lists are one). */
export type TaskState =
  | 'TASK_STATE_UNSPECIFIED'
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_REJECTED'
  | 'TASK_STATE_AUTH_REQUIRED';

/** A task as lists, chains and live updates show it (rows.ts makes it; every string is user input). */
export interface TaskRowView {
  /** Ledger key (`M.S.K`, tokens encoded): the row's identity on the page and in actions. */
  key: string;
  /** `MACHINE/SESSION:MESSAGE-ID`. */
  name: string;
  /** The local task id, `SESSION:MESSAGE-ID`. */
  id: string;
  machine: string;
  /** `MACHINE/SESSION` the task was given to. */
  to: string;
  state: TaskState;
  open: boolean;
  /** `DEVICE (MACHINE/SESSION)`: the verified device, the claimed session beside it. */
  from: string;
  device: string;
  /** Origin of a root task: a person, an agent asking outside a task, or a schedule. */
  origin: 'person' | 'agent' | 'schedule';
  schedule?: string;
  text: string;
  lastWorkerLine?: string;
  /** The worker's last word on a finished or interrupted task (its status message). */
  result?: string;
  queued: boolean;
  held: boolean;
  stalled?: string;
  nudges: number;
  acknowledged: boolean;
  expired: boolean;
  parent?: string;
  parentKey?: string;
  depth: number;
  createdAt: number;
  statusAt: number;
  /** Changes of this task so far (ledger entry `v`): the page keeps the newest it has seen. */
  v: number;
}

export interface CountsView {
  total: number;
  open: number;
  held: number;
  stalled: number;
}

export interface TaskDetailView {
  row: TaskRowView;
  contextId: string;
  metadata: Record<string, string>;
  history: { role: string; messageId: string; at?: string; text: string }[];
  historyOmitted: number;
  status: { state: TaskState; at?: string; text?: string };
  artifacts: { name: string; text: string }[];
}

export interface ChainNodeView {
  key: string;
  row?: TaskRowView;
  name?: string;
  children: ChainNodeView[];
  more?: number;
}

export interface ChainView {
  root: ChainNodeView;
  size: number;
}

export interface AgentView {
  agent: string;
  machine: string;
  session: string;
  harness: string;
  state: string;
  cwd?: string;
  openTasks: number;
  queuedTasks: number;
  autoApprove: boolean;
  remindersStopped: boolean;
  lastSpokeAt?: string;
  /** The task the session works on now (`MACHINE/SESSION:ID`) and its ledger key (the task page). */
  task?: { name: string; key?: string };
  ttlMs: number;
  /** Age of the signal when this row was made, ms (the page keeps counting). */
  ageMs: number;
  /** This machine's own session (the owner can act on it here). */
  local: boolean;
  /** Where another machine's dashboard is (from the URL its bridge announces). */
  dashboardUrl?: string;
}

export interface RefusalView {
  at: string;
  machine: string;
  session: string;
  device: string;
  from?: string;
  key: string;
  code: number;
  message: string;
}

export interface NoteView {
  kind: string;
  agent: string;
  taskId?: string;
  at: string;
  nudge?: number;
}

export interface Viewer {
  device: string;
  self: boolean;
}

/** `GET /dashboard/api/overview`, and the feed's `hello`. */
export interface Overview {
  machine: string;
  viewer: Viewer;
  counts: CountsView;
  agents: AgentView[];
  sessions: { agent: string }[];
  refusals: RefusalView[];
  notes: NoteView[];
}

/** `GET /dashboard/api/tasks`. */
export interface TasksPage {
  rows: TaskRowView[];
  next?: string;
  total: number;
}

/** `GET /dashboard/api/task`. */
export interface TaskAnswer {
  detail: TaskDetailView;
  children: TaskRowView[];
  chainSize: number;
}

/** `GET /dashboard/api/chains`. */
export interface ChainsPage {
  chains: ChainView[];
  total: number;
  next?: number;
}

/** `GET /dashboard/api/chain`. */
export interface ChainAnswer {
  chain: ChainView;
}

/** `GET /dashboard/api/attention`. */
export interface AttentionAnswer {
  held: TaskRowView[];
  stalled: TaskRowView[];
  refusals: RefusalView[];
  notes: NoteView[];
  counts: CountsView;
}

/** A device's loop-guard window (`GET /dashboard/api/guard`, `POST …/guard/reset`). */
export interface GuardWindowView {
  device: string;
  count: number;
  limit: number;
  windowMs: number;
  retryAfterMs: number;
  oldestAt?: string;
}

export interface GuardAnswer {
  agent: string;
  window: GuardWindowView;
}

/** What an action answers: a task action carries the task's row as it now is. */
export interface ActionAnswer {
  ok: true;
  row?: TaskRowView;
}

/** The events of `/dashboard/events`, by name. */
export interface DashboardEvents {
  hello: Overview;
  tasks: { rows: TaskRowView[]; counts: CountsView };
  resync: { counts: CountsView };
  agents: { agents: AgentView[] };
  refusal: RefusalView;
  note: NoteView;
}

/** An error answer of any dashboard route. */
export interface ErrorAnswer {
  error: { key: string; code: number; message: string };
}
