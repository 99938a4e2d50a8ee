/** Figures of each scenario, written to test-output/machines/summary.json and shown in docs/reliability.md. */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
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

const DIR = join(REPO_ROOT, 'test-output', 'machines');

export function writeSummary(): void {
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, 'summary.json'), `${JSON.stringify({ at: new Date().toISOString(), scenarios }, null, 2)}\n`);
}

/**
 * Every unit's output to test-output/machines/logs/MACHINE/UNIT.log (read them when a scenario
 * failed: the rig's folder goes with the tear-down).
 */
export function writeLogs(machines: { name: string; processes: Map<string, { output(): string }> }[]): void {
  rmSync(join(DIR, 'logs'), { recursive: true, force: true });
  for (const m of machines) {
    const dir = join(DIR, 'logs', m.name);
    mkdirSync(dir, { recursive: true });
    for (const [label, p] of m.processes) writeFileSync(join(dir, `${label}.log`), p.output());
  }
}
