/** What the page holds between renders: the overview from the feed and the view on screen. */
import type {
  AgentView,
  AttentionAnswer,
  ChainAnswer,
  ChainsPage,
  CountsView,
  NoteView,
  RefusalView,
  TaskAnswer,
  TaskRowView,
  TaskState,
  Viewer,
} from '../wire.js';

export const STATE_LABEL: Record<TaskState, string> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_INPUT_REQUIRED: 'input required',
  TASK_STATE_AUTH_REQUIRED: 'auth required',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_UNSPECIFIED: 'unknown',
};

/** The task list's state filter: the server's STATE_FILTERS (board.ts), with their labels. */
export const FILTERS: readonly (readonly [string, string])[] = [
  ['all', 'All states'],
  ['open', 'Open'],
  ['TASK_STATE_WORKING', 'Working'],
  ['TASK_STATE_SUBMITTED', 'Submitted'],
  ['queued', 'Queued'],
  ['TASK_STATE_INPUT_REQUIRED', 'Input required'],
  ['held', 'Held'],
  ['stalled', 'Stalled'],
  ['finished', 'Finished'],
  ['TASK_STATE_COMPLETED', 'Completed'],
  ['TASK_STATE_FAILED', 'Failed'],
  ['TASK_STATE_CANCELED', 'Canceled'],
  ['TASK_STATE_REJECTED', 'Rejected'],
];

/** Tasks per page of the list. */
export const PAGE = 50;

/** The task list's filter, as the hash carries it. */
export interface Filter {
  agent: string;
  state: string;
  q: string;
}

export interface TaskList {
  filter: Filter;
  rows: TaskRowView[];
  next?: string;
  total: number;
}

/** The answer a view (other than the list and the agents) was painted from, by view. */
export type Shown =
  | { view: 'task'; data: TaskAnswer }
  | { view: 'chains'; data: ChainsPage }
  | { view: 'chain'; data: ChainAnswer }
  | { view: 'attention'; data: AttentionAnswer };

export interface PageState {
  machine: string;
  viewer: Viewer;
  counts: CountsView | null;
  agents: AgentView[];
  /** When `agents` arrived (ms): their ages count on from there. */
  agentsAt: number;
  sessions: { agent: string }[];
  refusals: RefusalView[];
  notes: NoteView[];
  live: boolean;
  /** The task list on screen, if it is. */
  list: TaskList | null;
  /** Cursors of the pages before this one (the list's "Newer" goes back one). */
  cursors: string[];
  /** The elements of the list's rows, by key, to replace one in place. */
  rowEls: Map<string, HTMLElement>;
  /** What the view on screen was made from (the live feed compares changes with it). */
  shown: Shown | null;
  /** Two-step buttons armed right now: a reload waits while any is. */
  armed: number;
}

export const S: PageState = {
  machine: '',
  viewer: { device: '', self: false },
  counts: null,
  agents: [],
  agentsAt: 0,
  sessions: [],
  refusals: [],
  notes: [],
  live: false,
  list: null,
  cursors: [],
  rowEls: new Map(),
  shown: null,
  armed: 0,
};
