/**
 * What a queued task waits for, read from the worker's signal: the task it works on, a turn or a
 * prompt of its own, or no bridge at all. A hint read once when asked (a listing of the signal
 * field), never written per task: the signal may be a few seconds old, and the task's own state
 * stays what decides.
 */
import type { AgentInfo } from './agents.js';
import type { TaskSummary } from './summary.js';

export function whyQueued(s: Pick<TaskSummary, 'task' | 'agent' | 'status'>, agents: readonly AgentInfo[]): string | undefined {
  if (s.status !== 'queued') return undefined;
  const a = agents.find((x) => x.name === s.agent);
  if (!a || a.state === 'stopped') return `no bridge serves ${s.agent}: the task waits in its queue until one starts`;
  // The signal already names this task: it is being taken up, newer than the state read.
  if (a.task === s.task) return undefined;
  const others = a.queuedTasks > 1 ? `; ${a.queuedTasks} tasks wait in its queue` : '';
  if (a.task) return `${s.agent} works on ${a.task}${others}`;
  if (a.state === 'starting') return `${s.agent} is starting${others}`;
  if (a.state === 'waiting') return `${s.agent} has a permission prompt open${others}`;
  if (a.state === 'working') return `${s.agent} is in a turn of its own${others}`;
  return others ? `${a.queuedTasks} tasks wait in the queue of ${s.agent}` : undefined;
}

export interface QueuedWatch {
  /** The task's newest summary, on every change of it. */
  update(s: TaskSummary): void;
  stop(): void;
}

/**
 * What a queued task waits for, kept fresh while something shows a wait (a CLI line, MCP progress):
 * read when the task is queued and every `refreshMs` while it stays so; `onExplained` hears each
 * answer still about the newest summary (one read late about an older state is dropped).
 */
export function watchQueued(
  explain: (s: TaskSummary) => Promise<TaskSummary>,
  refreshMs: number,
  onExplained: (s: TaskSummary) => void,
): QueuedWatch {
  let latest: TaskSummary | undefined;
  const read = () => {
    const s = latest;
    if (s?.status !== 'queued') return;
    void explain(s).then((e) => {
      if (latest === s) onExplained(e);
    });
  };
  const timer = setInterval(read, refreshMs);
  timer.unref();
  return {
    update(s) {
      latest = s;
      read();
    },
    stop() {
      clearInterval(timer);
      latest = undefined;
    },
  };
}
