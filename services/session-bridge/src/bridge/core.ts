/** What the bridge's rooms share: the session's names, the ledger, the view, one lock, the harness. */
import type { Ledger } from '@shrooms/ledger';
import type { Logger } from '@shrooms/runtime';
import type { BridgeConfig } from '../config.js';
import type { Harness, HarnessEvents, HarnessState } from '../harness/types.js';
import type { TaskSpans } from '../tasks/spans.js';
import type { Serial } from './serial.js';
import type { Current, SessionView } from './view.js';
import type { WorkerLines } from './lines.js';

/** What the session did lately (for the signal and the watchdog). */
export interface Activity {
  /** The worker's last line of text per task (at most 500 characters each). */
  readonly lines: WorkerLines;
  lastSpokeAt?: string;
  /** When the harness last did anything (ms); the watchdog measures quiet from here. */
  lastActivityAt: number;
  /** Background commands the session started that still run (the watchdog waits for them). */
  backgroundJobs: number;
  remindersStopped: boolean;
}

export interface Core {
  readonly machine: string;
  readonly session: string;
  readonly ledger: Ledger;
  readonly log: Logger;
  readonly config: BridgeConfig;
  readonly view: SessionView;
  /** Every change of the view and the ledger writes that go with it run under this lock, in order. */
  readonly serial: Serial;
  readonly spans: TaskSpans;
  readonly activity: Activity;
  harness(): Harness;
  /** Whether the harness is idle (started, no turn, no prompt). */
  harnessIdle(): boolean;
  stopping(): boolean;
  /** Tells the listeners (presence) that something changed. */
  changed(): void;
}

/** What the watchdog reads of the session at a tick. */
export interface QuietState {
  harness: HarnessState;
  remindersStopped: boolean;
  backgroundJobs: number;
  lastActivityAt: number;
  /** The last line said while working on the current task ('' when none, or no task). */
  lastWorkerLine: string;
  current?: Current;
}

/** What the signal shows of the session. */
export interface PresenceState {
  harness: HarnessState;
  busy: boolean;
  openTasks: number;
  queuedTasks: number;
  lastSpokeAt?: string;
  remindersStopped: boolean;
  /** The task (`SESSION:ID`) the session works on now: the parent of what it asks without naming one. */
  task?: string;
}

/** The harness's events that only tell what the session did (its state, its words, its background jobs). */
export function activityEvents(
  a: Activity,
  changed: () => void,
  spoke: () => void = () => {},
): Pick<HarnessEvents, 'state' | 'text' | 'backgroundJobs'> {
  return {
    state: () => {
      a.lastActivityAt = Date.now();
      changed();
    },
    text: (line) => {
      a.lines.said(line);
      spoke();
      a.lastSpokeAt = new Date().toISOString();
      a.lastActivityAt = Date.now();
    },
    backgroundJobs: (n) => {
      a.backgroundJobs = n;
      a.lastActivityAt = Date.now();
    },
  };
}
