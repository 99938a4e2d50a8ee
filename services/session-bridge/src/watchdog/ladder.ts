/**
 * The reminder ladder as a pure function (spec §5): when is a task due for its next reminder, and
 * when is it stalled. Times in ms; `quietSince` is when the session last did something.
 */
export interface LadderConfig {
  firstMs: number;
  /** Gaps after the first reminder: 1, 2, 5, 10, 30 min by default. */
  ladderMs: number[];
  maxPerHour: number;
  hourMs: number;
}

export interface NudgeState {
  nudges: number;
  /** ms of the last reminder, if any. */
  lastNudge?: number;
  stalled: boolean;
}

export type Verdict = { kind: 'wait' } | { kind: 'remind' } | { kind: 'stall' };

export function verdict(cfg: LadderConfig, s: NudgeState, quietSince: number, now: number): Verdict {
  if (s.stalled) return { kind: 'wait' };
  const since = Math.max(quietSince, s.lastNudge ?? 0);
  const gap = s.nudges === 0 ? cfg.firstMs : cfg.ladderMs[s.nudges - 1];
  if (gap === undefined) {
    // Every reminder sent: after one more full last gap of quiet, the task is stalled.
    const last = cfg.ladderMs[cfg.ladderMs.length - 1] ?? cfg.firstMs;
    return now - since >= last ? { kind: 'stall' } : { kind: 'wait' };
  }
  return now - since >= gap ? { kind: 'remind' } : { kind: 'wait' };
}

/** Reminder times still inside the hour window; a reminder may go out while fewer than the cap. */
export function underCap(cfg: LadderConfig, sentAt: number[], now: number): boolean {
  return sentAt.filter((t) => now - t < cfg.hourMs).length < cfg.maxPerHour;
}

export function parseLadder(text: string): number[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const n = Number(s);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`WATCHDOG_LADDER_MS: ${JSON.stringify(s)} is not a positive number of ms`);
      return n;
    });
}
