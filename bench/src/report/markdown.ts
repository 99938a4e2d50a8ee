import type { BenchResult } from '../run.js';
export function renderReport(r: BenchResult, _profile?: unknown): string {
  return '```json\n' + JSON.stringify(r.figures, null, 1) + '\n```\n';
}
