/** Figures of each scenario, written to test-output/machines/summary.json and shown in docs/reliability.md. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@shrooms/testing';

export interface ScenarioFigures {
  name: string;
  acknowledged: number;
  lost: number;
  doubled: number;
  /** From the end of the fault (heal, wake, restart) until the first request served; null: no fault to recover from. */
  recoveryMs: number | null;
  notes?: Record<string, unknown>;
}

const scenarios: ScenarioFigures[] = [];

export function record(f: ScenarioFigures): void {
  scenarios.push(f);
}

export function writeSummary(): void {
  const dir = join(REPO_ROOT, 'test-output', 'machines');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify({ at: new Date().toISOString(), scenarios }, null, 2)}\n`);
}
