/** A span of time as a person says it: `45 s`, `12 min`, `2.5 h`. */
export function humanDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min`;
  return `${Math.round(m / 6) / 10} h`;
}
