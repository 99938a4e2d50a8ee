/** Small statistics over samples: percentiles (nearest rank on sorted data), median, min and max. */

/** Nearest-rank percentile of an already sorted array; null when empty. */
export function percentileSorted(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface Percentiles {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  n: number;
}

export function percentiles(samples: readonly number[]): Percentiles {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentileSorted(s, 50), p90: percentileSorted(s, 90), p99: percentileSorted(s, 99), n: s.length };
}

export function median(values: readonly (number | null)[]): number | null {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

export function minMax(values: readonly (number | null)[]): { min: number | null; max: number | null } {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x));
  return v.length ? { min: Math.min(...v), max: Math.max(...v) } : { min: null, max: null };
}

/** Rounds for output: 3 significant decimals below 10, fewer above. */
export function round(x: number | null): number | null {
  if (x === null || !Number.isFinite(x)) return null;
  const a = Math.abs(x);
  const d = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3;
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

export function ratio(a: number | null, b: number | null): number | null {
  if (a === null || b === null || b === 0) return null;
  return round(a / b);
}
