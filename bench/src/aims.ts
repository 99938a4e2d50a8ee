/**
 * The aims of the hot-path issue, judged from a run's figures: each `{ aim, ratio | value, target,
 * met }` as latest.json carries them under `aims` and REPORT.md lists them. A ratio is ours ÷ the
 * reference (or, for "flat", ours at the larger size ÷ ours at the smaller); a value is ours alone.
 * A figure the run did not measure (the quick run has no spread over sessions) is not met.
 */
import { onNode, otherNodes, type Figure } from './figures.js';

export interface Aim {
  aim: string;
  ratio?: number | null;
  value?: number | null;
  /** The bound, read with `better`: at most (`lower`) or at least (`higher`). */
  target: number;
  better: 'lower' | 'higher';
  unit: string;
  met: boolean;
}

/** "Flat in ledger size": the larger size costs at most this many times the smaller. */
export const FLAT = 1.3;

export function judgeAims(
  figures: Record<string, Figure>,
  plan: { throughput: { concurrency: number[] }; memory?: { retained: number[] } },
): Aim[] {
  const ours = (key: string) => figures[key]?.arms.ours?.value ?? null;
  const vsRef = (key: string) => figures[key]?.ratios.ours_reference ?? null;
  const growth = (large: string, small: string) => {
    const a = ours(large);
    const b = ours(small);
    return a === null || b === null || b === 0 ? null : Math.round((a / b) * 100) / 100;
  };
  const out: Aim[] = [];
  const aim = (a: string, x: { ratio?: number | null; value?: number | null }, target: number, better: Aim['better'], unit: string) => {
    const v = 'ratio' in x ? x.ratio : x.value;
    const met = v !== null && v !== undefined && (better === 'lower' ? v <= target : v >= target);
    out.push({ aim: a, ...x, target, better, unit, met });
  };
  aim('blocking SendMessage p50 at concurrency 1, ours ÷ reference', { ratio: vsRef('send_blocking_c1_p50_ms') }, 1.5, 'lower', '×');
  for (const c of plan.throughput.concurrency) {
    const spread = Object.keys(figures).find((k) => new RegExp(`^tasks_per_s_c${c}_blocking_\\d+_sessions$`).test(k));
    const n = spread?.match(/_(\d+)_sessions$/)?.[1] ?? '4';
    aim(
      `tasks/s, blocking, concurrency ${c}, ours over ${n} sessions ÷ reference`,
      { ratio: spread ? vsRef(spread) : null },
      1.0,
      'higher',
      '×',
    );
    aim(
      `tasks/s, blocking, concurrency ${c}, ours on one session ÷ reference`,
      { ratio: vsRef(`tasks_per_s_c${c}_blocking`) },
      0.5,
      'higher',
      '×',
    );
  }
  aim('CPU per blocking task, all of ours’ processes and nats-server', { value: ours('cpu_ms_per_task') }, 1.0, 'lower', 'ms');
  aim('NATS messages per blocking send', { value: ours('nats_messages_per_blocking_send') }, 7, 'lower', 'msgs');
  aim('SSE first event p50, ours ÷ reference', { ratio: vsRef('sse_first_event_p50_ms') }, 2, 'lower', '×');
  const retained = plan.memory?.retained ?? [10_000, 100_000];
  const [few, many] = [retained[0]!, retained[retained.length - 1]!];
  const sizes = `${few.toLocaleString('en')} → ${many.toLocaleString('en')} retained tasks`;
  // The memory job's aims on this Node, then on each other Node it ran on (other-nodes.ts).
  for (const version of [null, ...otherNodes(figures)]) {
    const at = (key: string) => (version ? onNode(key, version) : key);
    const on = version ? ` on Node ${version}` : '';
    aim(`idle bridge RSS${on}`, { value: ours(at('idle_rss_bridge_mb')) }, 60, 'lower', 'MB');
    aim(`idle gateway RSS${on}`, { value: ours(at('idle_rss_gateway_mb')) }, 80, 'lower', 'MB');
    aim(
      `gateway RSS flat (idle), ${sizes}${on}`,
      { ratio: growth(at(`gateway_rss_${many}_tasks_mb`), at(`gateway_rss_${few}_tasks_mb`)) },
      FLAT,
      'lower',
      '×',
    );
    aim(
      `gateway start-up (to listening: sends, GetTask and ListTasks answered) flat, ${sizes}${on}`,
      { ratio: growth(at(`gateway_start_${many}_tasks_ms`), at(`gateway_start_${few}_tasks_ms`)) },
      FLAT,
      'lower',
      '×',
    );
  }
  aim(
    'kept: GetTask p50 flat in ledger size (large ÷ small)',
    { ratio: growth('get_task_large_p50_ms', 'get_task_small_p50_ms') },
    FLAT,
    'lower',
    '×',
  );
  aim(
    'kept: first ListTasks page p50 flat in ledger size (large ÷ small)',
    { ratio: growth('list_tasks_large_p50_ms', 'list_tasks_small_p50_ms') },
    FLAT,
    'lower',
    '×',
  );
  return out;
}

/** The aims as a Markdown table, each marked met or not met. */
export function aimsTable(aims: Aim[]): string {
  const fmt = (x: number | null | undefined) =>
    x === null || x === undefined ? '–' : Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en') : x.toFixed(2);
  return [
    '| aim | ours | target | |',
    '|---|---:|---:|---|',
    ...aims.map((a) => {
      const x = a.ratio !== undefined ? a.ratio : a.value;
      const unit = a.unit === '×' ? '×' : ` ${a.unit}`;
      return `| ${a.aim} | ${x === null || x === undefined ? 'not measured' : `${fmt(x)}${unit}`} | ${a.better === 'lower' ? '≤' : '≥'} ${fmt(a.target)}${unit} | ${a.met ? '**met**' : 'not met'} |`;
    }),
  ].join('\n');
}
