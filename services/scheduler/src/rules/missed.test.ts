import { describe, expect, it } from 'vitest';
import { planDue } from './missed.js';
import { compileRule, firstOccurrence } from './occurrences.js';

const MIN = 60_000;
// every 10 minutes from 08:00 UTC
const cr = compileRule({ at: '2026-05-01T08:00:00Z', zone: 'UTC', repeat: { freq: 'interval', every: 10, unit: 'minutes' } });
const first = firstOccurrence(cr)!;
const t0 = Date.parse(first.at);

describe('planDue', () => {
  it('waits while the next occurrence is in the future', () => {
    expect(planDue(cr, first, t0 - 1, 'fire-once', 5 * MIN)).toEqual({ kind: 'wait' });
  });

  it('fires an occurrence that is late by less than the grace window, under either policy', () => {
    for (const policy of ['fire-once', 'skip'] as const) {
      expect(planDue(cr, first, t0 + 4 * MIN, policy, 5 * MIN)).toMatchObject({ kind: 'fire', occurrence: first, skipped: 0, late: false });
    }
  });

  it('fires only the most recent missed occurrence once under fire-once', () => {
    // down from 08:00 until 08:47: 08:00…08:40 are missed (grace 5 min), 08:40 is the most recent
    const plan = planDue(cr, first, t0 + 47 * MIN, 'fire-once', 5 * MIN);
    expect(plan).toMatchObject({ kind: 'fire', late: true, skipped: 4 });
    expect(plan.kind === 'fire' && plan.occurrence.at).toBe('2026-05-01T08:40:00.000Z');
  });

  it('fires the occurrences within the window normally after the late one under fire-once', () => {
    // at 08:53 with grace 5: 08:40 is missed, 08:50 is within the window
    const plan = planDue(cr, first, t0 + 53 * MIN, 'fire-once', 5 * MIN);
    expect(plan.kind === 'fire' && plan.occurrence.at).toBe('2026-05-01T08:40:00.000Z');
  });

  it('skips every missed occurrence and resumes within the window under skip', () => {
    const plan = planDue(cr, first, t0 + 53 * MIN, 'skip', 5 * MIN);
    expect(plan).toMatchObject({ kind: 'skip', skipped: 5 });
    expect(plan.kind === 'skip' && plan.next?.at).toBe('2026-05-01T08:50:00.000Z');
  });

  it('finishes a one-shot schedule that was missed under skip', () => {
    const once = compileRule({ at: '2026-05-01T08:00:00Z', zone: 'UTC' });
    expect(planDue(once, firstOccurrence(once)!, t0 + 60 * MIN, 'skip', 5 * MIN)).toEqual({ kind: 'skip', next: null, skipped: 1 });
  });

  it('fires a missed one-shot schedule late under fire-once', () => {
    const once = compileRule({ at: '2026-05-01T08:00:00Z', zone: 'UTC' });
    expect(planDue(once, firstOccurrence(once)!, t0 + 60 * MIN, 'fire-once', 5 * MIN)).toMatchObject({
      kind: 'fire',
      late: true,
      skipped: 0,
    });
  });
});
