/**
 * The chaos suite's figures: one row per scenario, merged into `test-output/chaos/summary.json`
 * (rows of the current run only; a new run starts the file afresh) and printed as a table after
 * each file, so the last file of a run prints the whole table.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '../processes.js';

export interface ChaosRow {
  scenario: string;
  /** What ran meanwhile, e.g. `300 asks, 4 at a time`. */
  load: string;
  /** The faults injected, e.g. `kill -9 gateway (down 1.0 s)`. */
  faults: string;
  acknowledged: number;
  /** Acknowledged tasks missing from the ledger or in a wrong state (must be 0). */
  lost: number;
  /** Tasks still open past their deadline (must be 0). */
  stuck: number;
  /** From the fault until the affected path served a new ask end to end, ms. */
  recoveryMs: number | null;
  /** One short line for the table's last column (what else a reader must know). */
  notes?: string;
  /** Anything else worth keeping (errors seen by clients, retries, memory, …). */
  details?: Record<string, unknown>;
}

export interface ChaosSummary {
  run: string;
  updatedAt: string;
  rows: ChaosRow[];
  fuzz?: Record<string, unknown>;
}

export const CHAOS_OUTPUT_DIR = join(REPO_ROOT, 'test-output', 'chaos');
const SUMMARY = join(CHAOS_OUTPUT_DIR, 'summary.json');

/**
 * Identifies one `vitest run`: its files run in workers of one main process, so they share a parent
 * pid. CHAOS_RUN_ID overrides it.
 */
export function chaosRunId(): string {
  return process.env.CHAOS_RUN_ID ?? `vitest-${process.ppid}`;
}

async function readSummary(): Promise<ChaosSummary | undefined> {
  try {
    return JSON.parse(await readFile(SUMMARY, 'utf8')) as ChaosSummary;
  } catch {
    return undefined;
  }
}

async function writeSummary(s: ChaosSummary): Promise<void> {
  await mkdir(CHAOS_OUTPUT_DIR, { recursive: true });
  const tmp = `${SUMMARY}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(s, null, 2) + '\n');
  await rename(tmp, SUMMARY);
}

/** Adds (or replaces, by scenario name) rows of this run; returns every row of this run so far. */
export async function recordChaosRows(rows: ChaosRow[], extra: { fuzz?: Record<string, unknown> } = {}): Promise<ChaosSummary> {
  const run = chaosRunId();
  const prev = await readSummary();
  const base: ChaosSummary = prev && prev.run === run ? prev : { run, updatedAt: '', rows: [] };
  const names = new Set(rows.map((r) => r.scenario));
  const next: ChaosSummary = {
    ...base,
    updatedAt: new Date().toISOString(),
    rows: [...base.rows.filter((r) => !names.has(r.scenario)), ...rows],
    ...(extra.fuzz ? { fuzz: extra.fuzz } : {}),
  };
  await writeSummary(next);
  return next;
}

const secs = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(1)} s`);

/** A plain-text table (also valid Markdown) of the rows. */
export function formatChaosTable(rows: ChaosRow[]): string {
  const head = ['scenario', 'load', 'faults injected', 'acknowledged', 'lost', 'stuck', 'recovery', 'notes'];
  const body = rows.map((r) => [
    r.scenario,
    r.load,
    r.faults,
    String(r.acknowledged),
    String(r.lost),
    String(r.stuck),
    secs(r.recoveryMs),
    r.notes ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/** Records `rows`, then prints the table of the whole run so far (stdout, so CI logs keep it). */
export async function reportChaos(title: string, rows: ChaosRow[], extra: { fuzz?: Record<string, unknown> } = {}): Promise<ChaosSummary> {
  const s = await recordChaosRows(rows, extra);
  const lines = [`\n=== chaos: ${title} ===`];
  for (const r of rows) if (r.details) lines.push(`${r.scenario}: ${JSON.stringify(r.details)}`);
  lines.push(
    `\nchaos summary (${s.rows.length} scenario${s.rows.length === 1 ? '' : 's'} so far in this run; ${join('test-output', 'chaos', 'summary.json')}):`,
  );
  lines.push(formatChaosTable(s.rows));
  process.stdout.write(lines.join('\n') + '\n');
  return s;
}
