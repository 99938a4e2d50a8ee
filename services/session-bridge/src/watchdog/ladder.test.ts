import { describe, expect, it } from 'vitest';
import { underCap, verdict, type LadderConfig } from './ladder.js';

const cfg: LadderConfig = { firstMs: 120_000, ladderMs: [60_000, 120_000, 300_000, 600_000, 1_800_000], maxPerHour: 6, hourMs: 3_600_000 };
const min = 60_000;

describe('the reminder ladder', () => {
  it('reminds first after the quiet time, then after each gap of the ladder', () => {
    expect(verdict(cfg, { nudges: 0, stalled: false }, 0, 2 * min - 1).kind).toBe('wait');
    expect(verdict(cfg, { nudges: 0, stalled: false }, 0, 2 * min).kind).toBe('remind');
    expect(verdict(cfg, { nudges: 1, lastNudge: 2 * min, stalled: false }, 0, 3 * min - 1).kind).toBe('wait');
    expect(verdict(cfg, { nudges: 1, lastNudge: 2 * min, stalled: false }, 0, 3 * min).kind).toBe('remind');
    expect(verdict(cfg, { nudges: 5, lastNudge: 0, stalled: false }, 0, 30 * min).kind).toBe('remind');
    expect(verdict(cfg, { nudges: 6, lastNudge: 0, stalled: false }, 0, 30 * min).kind).toBe('stall');
  });

  it('counts quiet from the last activity when the session spoke after a reminder', () => {
    expect(verdict(cfg, { nudges: 1, lastNudge: 0, stalled: false }, 10 * min, 10.5 * min).kind).toBe('wait');
  });

  it('never reminds a stalled task again', () => {
    expect(verdict(cfg, { nudges: 6, lastNudge: 0, stalled: true }, 0, 1e9).kind).toBe('wait');
  });

  it('holds the hourly cap', () => {
    const sent = [0, 1, 2, 3, 4, 5].map((n) => n * min);
    expect(underCap(cfg, sent, 10 * min)).toBe(false);
    expect(underCap(cfg, sent, 61 * min)).toBe(true);
  });
});
