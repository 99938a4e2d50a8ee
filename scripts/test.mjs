#!/usr/bin/env node
// The test command: every project in turn on this machine's Node, then — with `--node 22,24` — the
// runtime projects again on each of those Node versions, and one summary line over all runs that CI
// can read ("N passed, N failed"; it is always the last line).
//
//   node scripts/test.mjs                      every project on this machine's Node
//   node scripts/test.mjs unit e2e             only those projects (on every Node asked for)
//   node scripts/test.mjs --node 22,24         also on Node 22 and 24 (majors map to the pins of
//                                              node-versions.mjs; an exact version such as 24.21.0
//                                              is taken as it is)
//
// Other Node versions are installed once from the npm registry (node-versions.mjs). Each run puts
// its Node first on PATH, so every process the tests start (services, CLIs, harnesses) runs on it.
//
// Nothing of a run outlives it: after each project, a process its tests started and left running
// fails the run and is stopped; stopped early (Ctrl-C, SIGTERM, or its output closed, as by
// `| head`), it stops the project running, then every process of the run and its temporary folders;
// what a run killed outright left is cleaned up by the next one (leftovers.mjs).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { stripVTControlCharacters } from 'node:util';
import { delimiter, dirname, join, relative } from 'node:path';
import { nodeBinary, parseNodeVersions } from './node-versions.mjs';
import { newRunMarker, removeFoldersOfRun, stopProcessesOfRun, sweepDeadRuns, TEST_RUN_ENV } from './leftovers.mjs';

/**
 * The projects, in the order they run. A project is either a `command` (one check: it passes or
 * fails) or a `vitest` project of vitest.config.ts (its tests are counted). `everyNode: true` runs
 * it again on each Node of `--node`; leave it off for checks of files rather than of the runtime
 * (format, types, manifests), or for projects too slow to repeat (see docs/reliability.md for what
 * each run costs). `with: 'x'` runs the project too when `x` is asked for by name. To add a
 * project: one line here, plus its entry in vitest.config.ts.
 */
const PROJECTS = [
  { name: 'lint', command: () => ['pnpm', 'run', '--silent', 'lint'] },
  // `pnpm typecheck`: every project (tsc -b, the dashboard's browser code among them), then the whole tree with the tests.
  { name: 'typecheck', command: () => ['pnpm', 'run', '--silent', 'typecheck'] },
  // Manifests and compose against their schemas, NATS configs with nats-server -t, and every
  // container command started for real (scripts/check-deploy.mjs).
  { name: 'deploy', command: (node) => [node, 'scripts/check-deploy.mjs', '--strict'] },
  // The image built and the compose file run under a private Docker engine (root; skipped, saying
  // why, where no engine can start). `./shrooms test deploy` runs it with the offline checks.
  { name: 'docker', vitest: true, with: 'deploy' },
  { name: 'unit', vitest: true, everyNode: true },
  { name: 'e2e', vitest: true, everyNode: true },
  // Real third-party A2A and MCP clients against one `up` (test/interop/setup.ts).
  { name: 'interop', vitest: true, everyNode: true },
  // Real claude, pi, Gemini CLI and OpenCode against a fake model: serial and the slowest per test; run once.
  { name: 'harness', vitest: true },
  { name: 'chaos', vitest: true, everyNode: true },
  // Four machines as network namespaces on real WireGuard (root; about 3 minutes): run once.
  { name: 'machines', vitest: true },
  // `pnpm bench --quick` end to end (about 3 minutes; its figures are not judged): run once.
  { name: 'bench', vitest: true },
];

const args = process.argv.slice(2);
const USAGE = `usage: ./shrooms test [PROJECT ...] [--node 22,24]\n\nRuns every project (or those named) on this machine's Node, and the runtime projects again on each Node\nof --node; the last line says "N passed, N failed". The projects: ${PROJECTS.map((p) => p.name).join(' ')}\n`;
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
}
// Any other option is a mistake, not a request to run everything.
const badOption = args.find((a, i) => a.startsWith('-') && a !== '--node' && !a.startsWith('--node=') && args[i - 1] !== '--node');
if (badOption) {
  console.error(`unknown option ${badOption}\n${USAGE}`);
  process.exit(1);
}
const nodeArg = args.flatMap((a, i) => (a.startsWith('--node=') ? [a.slice(7)] : a === '--node' ? [args[i + 1] ?? ''] : []));
const wanted = args.filter((a, i) => !a.startsWith('-') && args[i - 1] !== '--node');
const unknown = wanted.filter((w) => !PROJECTS.some((p) => p.name === w));
if (unknown.length) {
  console.error(`unknown project ${unknown.join(', ')}; the projects are: ${PROJECTS.map((p) => p.name).join(' ')}`);
  process.exit(1);
}
let versions;
try {
  versions = parseNodeVersions(nodeArg);
} catch (err) {
  console.error(err.message);
  process.exit(1);
}

const outDir = join(process.cwd(), 'test-output');
mkdirSync(outDir, { recursive: true });

// This run's marker, inherited by every process it starts. Always a new one: a run started from
// inside another (a test of this command) must not take the outer run's processes for its own.
const runId = newRunMarker();
process.env[TEST_RUN_ENV] = runId;
// What runs killed outright (SIGKILL: they could stop nothing) left on this host.
const swept = await sweepDeadRuns();
if (swept.processes || swept.folders)
  console.error(
    `stopped ${swept.processes} process(es) and removed ${swept.folders} temporary folder(s) left by test runs that were killed`,
  );
/** How long a project's processes may take to end after it has (ms); past it they are left running. */
const LEFT_RUNNING_GRACE_MS = 5000;

/** The project's process while one runs, and why the run is stopping once it is. */
let current;
let stopping;

/** Stops the run: the project running now first; the rest once it has ended (see finishStopping). */
function stop(code, why) {
  if (stopping) return;
  stopping = { code, why };
  // Passed on: a terminal's Ctrl-C reaches the project too, but a signal sent to this command alone
  // (`kill -INT`) does not. A second SIGINT is harmless: vitest exits on its first without waiting.
  current?.kill(why.startsWith('SIG') ? why : 'SIGTERM');
}
for (const [sig, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
]) {
  process.on(sig, () => stop(code, sig));
}
// Whoever read the output is gone (`./shrooms test | head`): stop, as a shell command would on SIGPIPE.
process.stdout.on('error', () => stop(141, 'its output was closed'));
process.stderr.on('error', () => {});

async function finishStopping() {
  const stopped = await stopProcessesOfRun(runId);
  const removed = removeFoldersOfRun(runId);
  process.stderr.write(
    `\ntest run stopped (${stopping.why}): ${stopped.length} of its processes stopped, ${removed.length} of its temporary folders removed\n`,
  );
  process.exit(stopping.code);
}

/** Runs a project's command to its end: its exit status, or its signal's name. */
function exec(cmd, args, env) {
  return new Promise((done) => {
    current = spawn(cmd, args, { stdio: 'inherit', env });
    current.on('error', () => done(-1));
    current.on('exit', (code, signal) => done(code ?? signal));
  }).finally(() => {
    current = undefined;
  });
}

/**
 * Stops what a project's tests started and left running. After a project that ended normally that
 * is a fault of the tests, and fails the run; after one that did not (it crashed, or was stopped),
 * it is what could not be stopped by the tests, and only said.
 */
async function stopLeftRunning(project, counts) {
  const left = await stopProcessesOfRun(runId, { graceMs: LEFT_RUNNING_GRACE_MS });
  const list = left.map((l) => `  ${l.pid} ${l.command}`).join('\n');
  if (counts.crashed) {
    // Its teardown did not run: its folders go now, before the next project's check would count them.
    const removed = removeFoldersOfRun(runId);
    process.stderr.write(
      `\nproject ${project} did not end normally: stopped the ${left.length} process(es) its tests had started and removed ${removed.length} temporary folder(s)\n${list}\n`,
    );
    return;
  }
  if (!left.length) return;
  process.stderr.write(
    `\nLEFT RUNNING by project ${project}: ${left.length} process(es) its tests started were still running ${LEFT_RUNNING_GRACE_MS / 1000} s after it ended; stopped now:\n${list}\nStop each in the teardown of the test or helper that started it, also when a test fails.\n`,
  );
  counts.failed += 1;
  counts.failures = [...(counts.failures ?? []), `${left.length} process(es) left running: ${left.map((l) => l.command).join('; ')}`];
}

/** One run: the chosen projects on one Node binary. Returns its counts. */
async function runOn(node, label, projects, reportDir) {
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH}` };
  const run = { label, passed: 0, failed: 0, skipped: 0, lines: [], startedAt: Date.now() };
  mkdirSync(reportDir, { recursive: true });
  for (const p of projects) {
    if (stopping) await finishStopping();
    const t0 = Date.now();
    console.log(`\n=== ${p.name} (${label}) ===`);
    const counts = p.command
      ? await runCommand(p.command(node), env)
      : await runVitest(node, p.name, env, join(reportDir, `vitest-${p.name}.json`));
    if (stopping) await finishStopping();
    await stopLeftRunning(p.name, counts);
    run.passed += counts.passed;
    run.failed += counts.failed;
    run.skipped += counts.skipped;
    run.lines.push(`  ${p.name.padEnd(10)} ${summary(counts)} in ${duration(Date.now() - t0)}`);
    for (const t of counts.retried ?? []) {
      run.lines.push(`    passed on retry ${t.retries}: ${t.name}`);
      if (t.error) run.lines.push(`      before: ${t.error}`);
    }
    for (const t of counts.failures ?? []) run.lines.push(`    failed: ${t}`);
  }
  run.ms = Date.now() - run.startedAt;
  return run;
}

async function runCommand([cmd, ...rest], env) {
  const status = await exec(cmd, rest, env);
  return status === 0 ? { passed: 1, failed: 0, skipped: 0 } : { passed: 0, failed: 1, skipped: 0 };
}

async function runVitest(node, project, env, report) {
  const summaryFile = report.replace(/\.json$/, '.summary.json');
  rmSync(report, { force: true });
  rmSync(summaryFile, { force: true });
  const vitest = join(process.cwd(), 'node_modules', 'vitest', 'vitest.mjs');
  const reporters = ['--reporter=default', '--reporter=json', `--reporter=${join(process.cwd(), 'scripts', 'summary-reporter.mjs')}`];
  const status = await exec(node, [vitest, 'run', '--project', project, ...reporters, `--outputFile.json=${report}`, '--passWithNoTests'], {
    ...env,
    SHROOMS_SUMMARY_FILE: summaryFile,
  });
  try {
    const j = JSON.parse(readFileSync(report, 'utf8'));
    const c = { passed: j.numPassedTests, failed: j.numFailedTests, skipped: j.numPendingTests + j.numTodoTests };
    // Passed only on a retry (the projects that allow one say why): counted as passed, and shown.
    const more = existsSync(summaryFile) ? JSON.parse(readFileSync(summaryFile, 'utf8')) : { retried: [], failed: {} };
    c.retried = more.retried;
    // The failed tests by name, with the first line of each error: the summary is often all a CI run keeps.
    c.failures = failuresOf(j, more.failed);
    // A file that failed to load has no failed test of its own: count the file.
    if (j.numFailedTestSuites > 0 && j.numFailedTests === 0) c.failed += j.numFailedTestSuites;
    if (status !== 0 && c.failed === 0) {
      // No test failed, yet the run did: a global setup's check (LEAKED TEMP FOLDERS, test/temp.setup.ts) or a crash.
      console.error(`project ${project}: vitest exited ${status} with no failed test; see its output above`);
      c.failed = 1;
    }
    return c;
  } catch {
    console.error(`no report from project ${project} (exit ${status})`);
    return { passed: 0, failed: 1, skipped: 0, crashed: true };
  }
}

/** "file > test: first line of its error" for each failed test (or file that failed to load) of a vitest JSON report; `messages` (the summary reporter's) name the error where the report cannot. */
function failuresOf(report, messages = {}) {
  const firstLine = (m) =>
    stripVTControlCharacters(String(m ?? ''))
      .trim()
      .split('\n')[0]
      .slice(0, 200);
  return (report.testResults ?? []).flatMap((f) => {
    const file = relative(process.cwd(), f.name);
    const failed = (f.assertionResults ?? []).filter((a) => a.status === 'failed');
    if (failed.length === 0) return f.status === 'failed' ? [`${file}: ${firstLine(f.message)}`] : [];
    return failed.map((a) => `${file} > ${a.fullName}: ${firstLine(messages[`${f.name}\n${a.fullName}`] ?? a.failureMessages?.[0])}`);
  });
}

const summary = (c) => `${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ''}`;
const duration = (ms) => `${Math.floor(ms / 60_000)}m ${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')}s`;

const chosen = wanted.length ? PROJECTS.filter((p) => wanted.includes(p.name) || wanted.includes(p.with)) : PROJECTS;
const runs = [await runOn(process.execPath, `node ${process.version}, this machine`, chosen, outDir)];
// Named projects run on every Node asked for; otherwise the runtime ones (`everyNode`).
const again = wanted.length ? chosen : PROJECTS.filter((p) => p.everyNode);
for (const v of versions) {
  if (`v${v}` === process.version) continue;
  let node;
  try {
    node = nodeBinary(v);
  } catch (err) {
    console.error(err.message);
    runs.push({ label: `node v${v}`, passed: 0, failed: 1, skipped: 0, lines: ['  (not installed)'], ms: 0 });
    continue;
  }
  runs.push(await runOn(node, `node v${v}`, again, join(outDir, `node-${v}`)));
}

const total = runs.reduce((t, r) => ({ passed: t.passed + r.passed, failed: t.failed + r.failed, skipped: t.skipped + r.skipped }), {
  passed: 0,
  failed: 0,
  skipped: 0,
});
console.log('');
for (const r of runs) {
  console.log(`${r.label}: ${summary(r)} in ${duration(r.ms)}`);
  for (const l of r.lines) console.log(l);
}
console.log(`\n${summary(total)}`);
process.exit(stopping ? stopping.code : total.failed > 0 ? 1 : 0);
