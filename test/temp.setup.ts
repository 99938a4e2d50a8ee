/**
 * Global setup of every project, listed first so that its teardown runs after the others': gives the
 * run a marker (SHROOMS_TEST_RUN, inherited by every worker and process the tests start) that the
 * temporary folders of libs/testing's tempDir carry in their names, and at the end fails the run
 * when any of them is still in the OS temp dir, naming each with the prefix that made it — then
 * removes them. Only this run's marker counts: the folders of another run on the same host (another
 * clone, another developer) are neither counted nor touched.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leftByRun, TEST_RUN_ENV } from '@shrooms/testing';

/** Set once the first project's teardown has checked (a run of several projects checks once, at the end). */
const CHECKED = 'SHROOMS_TEST_RUN_CHECKED';

export default function setup(): () => void {
  // The test command (scripts/test.mjs) names the run for all its projects; a vitest started by hand
  // gets a name here, once for all its projects (this file is loaded once per project).
  const run = (process.env[TEST_RUN_ENV] ||= `t${randomBytes(4).toString('hex')}`);
  return function checkTempDirs() {
    if (process.env[CHECKED] === run) return;
    process.env[CHECKED] = run;
    const left = leftByRun(run);
    if (!left.length) return;
    const byPrefix = new Map<string, number>();
    for (const l of left) byPrefix.set(l.prefix, (byPrefix.get(l.prefix) ?? 0) + 1);
    const lines = [
      `temporary folders left behind in ${tmpdir()} by this run (${run}): ${left.length}`,
      ...[...byPrefix].map(([prefix, n]) => `  ${prefix}-*: ${n}`),
      ...left.map((l) => `  ${join(tmpdir(), l.name)}`),
      "Each was made by tempDir('PREFIX') and not removed: remove it in the teardown of the test or helper that made it, also when a test fails. Removed now.",
    ];
    process.stderr.write(`\nLEAKED TEMP FOLDERS\n${lines.join('\n')}\n`);
    for (const l of left) rmSync(join(tmpdir(), l.name), { recursive: true, force: true });
    process.exitCode = 1;
  };
}
