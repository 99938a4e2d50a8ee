/**
 * `pnpm bench [--quick] [--profile]`: measures the floor, the reference and ours side by side and
 * writes bench/results/latest.json and bench/REPORT.md (see REPORT.md for what each figure means).
 * `--profile` instead runs ours alone under `--cpu-prof` and writes bench/results/profile.json.
 * A full run and `--memory` run the memory job on Node 22 and 24 too (`--node`, other-nodes.ts).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { judgeAims } from './aims.js';
import { stopOnSignals } from './interrupt.js';
import { BENCH_SRC } from './child.js';
import { runHot } from './hot.js';
import { ADMISSIONS, type Admission } from './arms/ours.js';
import { runMemoryJob } from './memory-job.js';
import { memoryOnOtherNodes, nodeBinaries, type OtherNode } from './other-nodes.js';
import { PLANS } from './plan.js';
import { renderReport } from './report/markdown.js';
import { runProfile } from './profile/run.js';
import { runBench, type BenchResult } from './run.js';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    quick: { type: 'boolean' },
    profile: { type: 'boolean' },
    render: { type: 'boolean' },
    memory: { type: 'boolean' },
    'memory-figures': { type: 'boolean' },
    node: { type: 'string' },
    hot: { type: 'boolean' },
    admission: { type: 'string', default: 'local' },
    phase: { type: 'string', default: 'all' },
    sessions: { type: 'string', default: '1' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(
    'usage: pnpm bench [--quick] [--profile [--phase all|c16|c1 [--sessions N]]] [--render] [--memory] [--node LIST] [--hot [--sessions N]] [--admission local|service|off] [--out DIR]\n\n--admission how ours admits new tasks: in the gateway (local, as `up` runs it), by asking a guard process (service), or not at all (off: measures what admission costs; never how people run it)\n--hot measures ours alone (messages per send, p50, tasks/s and CPU per task at concurrency 16), for an A/B of two trees; writes hot.json\n--sessions N spreads the load of the throughput of --hot and of --phase c16 over N sessions (1 to 8; default 1), as the full run does for its figure over sessions\n--phase c16 profiles only blocking sends 16 at once (what the tasks/s and CPU aims measure) instead of every kind of request in turn; --phase c1 only blocking sends one at a time (what the p50 aim measures)\n--render rewrites REPORT.md from the last latest.json (no measuring)\n--memory runs the memory job alone and puts its figures into the last latest.json\n--node 22,24 runs the memory job again on each of those Node versions (majors or exact versions; installed once from the npm registry), as a full run and --memory do by default; --node none runs it on this Node only\n--out DIR writes latest.json and REPORT.md into DIR instead of bench/results and bench/\n',
  );
  process.exit(0);
}

if (!(ADMISSIONS as readonly string[]).includes(values.admission)) {
  process.stderr.write(`--admission is local, service or off, not ${JSON.stringify(values.admission)}\n`);
  process.exit(2);
}
const admission = values.admission as Admission;
const sessions = Number(values.sessions);
if (!Number.isInteger(sessions) || sessions < 1 || sessions > 8) {
  process.stderr.write(`--sessions is a whole number from 1 to 8, not ${JSON.stringify(values.sessions)}\n`);
  process.exit(2);
}
const RESULTS = values.out ? resolve(values.out) : join(BENCH_SRC, '..', 'results');
const REPORT = values.out ? join(RESULTS, 'REPORT.md') : join(BENCH_SRC, '..', 'REPORT.md');
const log = (line: string) => process.stderr.write(`${line}\n`);
stopOnSignals(log);
/**
 * The memory job's other Nodes (22 and 24 unless said otherwise; none for a quick run), installed
 * before anything is measured: a wrong `--node` or a failed install stops the bench at once.
 */
function otherNodesOrExit(): OtherNode[] {
  const list = values.node ?? (values.quick ? 'none' : '22,24');
  if (list === 'none') return [];
  try {
    return nodeBinaries(list.split(','), log);
  } catch (err) {
    process.stderr.write(`${(err as Error).message} (--node none runs the memory job on this Node only)\n`);
    process.exit(2);
  }
}
await mkdir(RESULTS, { recursive: true });

/**
 * The last run's latest.json, which --render and --memory build on; when there is none (a fresh
 * clone's --out folder), says so and exits before anything is measured.
 */
async function readLatest(flag: string): Promise<BenchResult> {
  const file = join(RESULTS, 'latest.json');
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) {
    process.stderr.write(
      `${flag} builds on the last run's ${file}, and there is none: run pnpm bench (or --quick) with this --out first\n`,
    );
    process.exit(2);
  }
  return JSON.parse(text) as BenchResult;
}

const readProfile = () =>
  readFile(join(BENCH_SRC, '..', 'results', 'profile.json'), 'utf8').then(
    (t) => JSON.parse(t),
    () => undefined,
  );

if (values.render) {
  const result = await readLatest('--render');
  result.aims = judgeAims(result.figures, result.run.plan);
  await writeFile(REPORT, renderReport(result, await readProfile()));
  log(`wrote ${REPORT} from ${join(RESULTS, 'latest.json')}`);
} else if (values['memory-figures']) {
  // The memory job alone, its figures on stdout: what other-nodes.ts runs on another Node.
  process.stdout.write(`${JSON.stringify((await runMemoryJob(PLANS[values.quick ? 'quick' : 'full'], log)).toJSON())}\n`);
} else if (values.memory) {
  const result = await readLatest('--memory');
  const nodes = otherNodesOrExit();
  const plan = PLANS[values.quick ? 'quick' : 'full'];
  for (const key of Object.keys(result.figures)) if (key.includes('@node')) delete result.figures[key];
  Object.assign(result.figures, (await runMemoryJob(plan, log)).toJSON(), await memoryOnOtherNodes(nodes, !!values.quick, log));
  result.run.plan.memory = plan.memory;
  result.run.memoryAt = new Date().toISOString();
  result.aims = judgeAims(result.figures, result.run.plan);
  await writeFile(join(RESULTS, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(REPORT, renderReport(result, await readProfile()));
  log(`wrote the memory job's figures into ${join(RESULTS, 'latest.json')} and ${REPORT}`);
} else if (values.hot) {
  const shape = values.quick ? { reps: 3, sends: 150, throughputMs: 1_000 } : { reps: 5, sends: 300, throughputMs: 3_000 };
  const hot = await runHot({ ...shape, admission, sessions }, log);
  await writeFile(join(RESULTS, 'hot.json'), `${JSON.stringify(hot, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(hot)}\n`);
} else if (values.profile) {
  if (values.phase !== 'all' && values.phase !== 'c16' && values.phase !== 'c1') {
    process.stderr.write(`--phase is all, c16 or c1, not ${JSON.stringify(values.phase)}\n`);
    process.exit(2);
  }
  const summary = await runProfile(PLANS[values.quick ? 'quick' : 'full'], join(RESULTS, 'profiles'), log, values.phase, sessions);
  await writeFile(join(RESULTS, 'profile.json'), `${JSON.stringify(summary, null, 2)}\n`);
  log(`wrote ${join(RESULTS, 'profile.json')}`);
} else {
  const plan = PLANS[values.quick ? 'quick' : 'full'];
  const nodes = otherNodesOrExit();
  const result = await runBench(plan, log, admission);
  // The memory job after the interleaved figures: fresh processes, started one at a time.
  const memory = await runMemoryJob(plan, log);
  Object.assign(result.figures, memory.toJSON(), await memoryOnOtherNodes(nodes, plan.mode === 'quick', log));
  result.aims = judgeAims(result.figures, plan);
  for (const a of result.aims)
    log(`aim ${a.met ? 'met    ' : 'not met'}  ${a.aim}: ${a.ratio ?? a.value ?? 'not measured'} (target ${a.target})`);
  result.run.durationS = Math.round((Date.now() - Date.parse(result.run.startedAt)) / 1000);
  await writeFile(join(RESULTS, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(REPORT, renderReport(result as BenchResult, await readProfile()));
  log(`wrote ${join(RESULTS, 'latest.json')} and ${REPORT}`);
}
// Child processes and sockets are closed; leave no timer holding the process.
process.exit(0);
