/**
 * Whether a task row is in a list filter: one rule for the page (rows changing live) and the
 * server's index (board.ts), so the list and its live updates agree. Pure: no DOM, no Node.
 */
import type { TaskRowView } from '../wire.js';

export interface RowFilter {
  /** `MACHINE/SESSION` the tasks were given to; '' or none: every session. */
  agent?: string | undefined;
  /** `all` (the default), `open`, `finished`, `queued`, `held`, `stalled` or a `TASK_STATE_…`. */
  state?: string | undefined;
  /** Case-insensitive substring of the task's name, text or asker. */
  q?: string | undefined;
}

/**
 * Whether a row's name, text or asker holds `q`, in any case: made once per query, so that a search
 * over every task the server's index holds builds nothing per row.
 */
export function searchFor(q: string): (r: TaskRowView) => boolean {
  const re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  return (r) => re.test(r.name) || re.test(r.text) || re.test(r.from);
}

/** `found`: the query's test (searchFor), when one row after another is checked against the same filter. */
export function matches(r: TaskRowView, f: RowFilter, found = f.q ? searchFor(f.q) : undefined): boolean {
  if (f.agent && r.to !== f.agent) return false;
  switch (f.state ?? 'all') {
    case 'all':
      break;
    case 'open':
      if (!r.open) return false;
      break;
    case 'finished':
      if (r.open) return false;
      break;
    case 'queued':
      if (!r.open || !r.queued) return false;
      break;
    case 'held':
      if (!r.open || !r.held) return false;
      break;
    case 'stalled':
      if (!r.open || !r.stalled) return false;
      break;
    default:
      if (r.state !== f.state) return false;
  }
  if (found && !found(r)) return false;
  return true;
}
