/**
 * What to do with a schedule whose next occurrence is due, given the missed-occurrence policy.
 *
 * An occurrence is on time while it is at most `graceMs` late (a tick, a failover, a retry). Past
 * that it was missed (everything was down, or the gateway refused to take it for that long):
 * - `fire-once`: fire the most recent missed occurrence once, late; older missed ones are skipped.
 *   Occurrences still within the grace window fire normally afterwards.
 * - `skip`: missed occurrences never fire; the schedule resumes with the first one within the window.
 */
import type { CompiledRule } from './occurrences.js';
import { lastOccurrenceBefore, occurrenceAtOrAfter } from './occurrences.js';
import type { Occurrence } from '@shrooms/protocol';

export const MISSED_POLICIES = ['fire-once', 'skip'] as const;
export type MissedPolicy = (typeof MISSED_POLICIES)[number];

export type DuePlan =
  /** Not due yet. */
  | { kind: 'wait' }
  /** Send this occurrence now; `skipped` older ones are given up (counted as missed). */
  | { kind: 'fire'; occurrence: Occurrence; skipped: number; late: boolean }
  /** Send nothing; move on to `next` (null: the rule has no more occurrences). */
  | { kind: 'skip'; next: Occurrence | null; skipped: number };

export function planDue(cr: CompiledRule, next: Occurrence, now: number, policy: MissedPolicy, graceMs: number): DuePlan {
  const at = Date.parse(next.at);
  if (at > now) return { kind: 'wait' };
  const cutoff = now - graceMs;
  if (at >= cutoff) return { kind: 'fire', occurrence: next, skipped: 0, late: false };
  if (policy === 'skip') {
    const resume = occurrenceAtOrAfter(cr, cutoff, next);
    const skipped = resume ? Math.max(1, resume.seq - next.seq) : lastOccurrenceBefore(cr, cutoff, next).seq - next.seq + 1;
    return { kind: 'skip', next: resume, skipped };
  }
  const last = lastOccurrenceBefore(cr, cutoff, next);
  return { kind: 'fire', occurrence: last, skipped: Math.max(0, last.seq - next.seq), late: true };
}
