/**
 * Figures as they go into latest.json: for each figure key, each arm's value (median over the
 * repetitions), the spread (min and max of the repetitions), the repetitions themselves, and the
 * ratios ours/reference and ours/floor (plain division; `better` says which way is good).
 */
import type { LatencyResult, ThroughputResult } from './loadgen/jobs.js';
import { median, minMax, percentiles, ratio, round } from './stats.js';

export const ARMS = ['floor', 'reference', 'ours'] as const;
export type Arm = (typeof ARMS)[number];

export interface ArmFigure {
  value: number | null;
  min: number | null;
  max: number | null;
  reps: (number | null)[];
  /** Timed requests (latency) or finished requests (throughput) over all repetitions. */
  samples: number;
  errors: number;
  firstError?: string;
  /** Load generator CPU, % of one core (median over repetitions). */
  loadgenCpuPct?: number | null;
}

export interface Figure {
  title: string;
  unit: 'ms' | 'tasks/s' | 'MB' | 'msgs';
  better: 'lower' | 'higher';
  arms: Partial<Record<Arm, ArmFigure>>;
  ratios: { ours_reference: number | null; ours_floor: number | null };
  context?: Record<string, unknown>;
}

interface Acc {
  title: string;
  unit: Figure['unit'];
  better: Figure['better'];
  arms: Partial<Record<Arm, { reps: (number | null)[]; samples: number; errors: number; firstError?: string; cpu: number[] }>>;
  context?: Record<string, unknown>;
}

/** The key of figure `key` measured on another Node than the bench's, `version` (other-nodes.ts). */
export const onNode = (key: string, version: string) => `${key}@node${version}`;

/** The Node versions a run's figures were measured on besides the bench's own, in the order run. */
export function otherNodes(figures: Record<string, Figure>): string[] {
  return [...new Set(Object.keys(figures).flatMap((k) => k.match(/@node(.+)$/)?.[1] ?? []))];
}

export class Figures {
  private acc = new Map<string, Acc>();

  private slot(key: string, title: string, unit: Figure['unit'], better: Figure['better'], arm: Arm) {
    let a = this.acc.get(key);
    if (!a) this.acc.set(key, (a = { title, unit, better, arms: {} }));
    return (a.arms[arm] ??= { reps: [], samples: 0, errors: 0, cpu: [] });
  }

  context(key: string, ctx: Record<string, unknown>): void {
    const a = this.acc.get(key);
    if (a) a.context = { ...a.context, ...ctx };
  }

  /** One repetition of a latency job: adds its p50, p90 and p99 to `<prefix>_pNN_ms`. */
  latency(prefix: string, title: string, arm: Arm, r: LatencyResult): void {
    const p = percentiles(r.samples);
    for (const [q, v] of [
      ['p50', p.p50],
      ['p90', p.p90],
      ['p99', p.p99],
    ] as const) {
      const s = this.slot(`${prefix}_${q}_ms`, `${title}, ${q}`, 'ms', 'lower', arm);
      s.reps.push(v);
      s.samples += r.samples.length;
      s.errors += r.errors;
      if (r.firstError) s.firstError ??= r.firstError;
      s.cpu.push(r.cpuPct);
    }
  }

  /** One repetition of a throughput job. */
  throughput(key: string, title: string, arm: Arm, r: ThroughputResult, value: number | null = r.perS): void {
    const s = this.slot(key, title, 'tasks/s', 'higher', arm);
    s.reps.push(value);
    s.samples += r.done;
    s.errors += r.errors;
    if (r.firstError) s.firstError ??= r.firstError;
    s.cpu.push(r.cpuPct);
  }

  /** A single value (memory, restart time). */
  single(key: string, title: string, unit: Figure['unit'], arm: Arm, value: number | null, better: Figure['better'] = 'lower'): void {
    const s = this.slot(key, title, unit, better, arm);
    s.reps.push(value);
    s.samples += 1;
  }

  toJSON(): Record<string, Figure> {
    const out: Record<string, Figure> = {};
    for (const [key, a] of this.acc) {
      const arms: Figure['arms'] = {};
      for (const arm of ARMS) {
        const s = a.arms[arm];
        if (!s) continue;
        const { min, max } = minMax(s.reps);
        arms[arm] = {
          value: round(median(s.reps)),
          min: round(min),
          max: round(max),
          reps: s.reps.map(round),
          samples: s.samples,
          errors: s.errors,
          ...(s.firstError ? { firstError: s.firstError } : {}),
          ...(s.cpu.length ? { loadgenCpuPct: round(median(s.cpu)) } : {}),
        };
      }
      const v = (arm: Arm) => arms[arm]?.value ?? null;
      out[key] = {
        title: a.title,
        unit: a.unit,
        better: a.better,
        arms,
        ratios: { ours_reference: ratio(v('ours'), v('reference')), ours_floor: ratio(v('ours'), v('floor')) },
        ...(a.context ? { context: a.context } : {}),
      };
    }
    return out;
  }
}
