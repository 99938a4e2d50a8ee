/**
 * Temporary folders of the tests, in the OS temp dir, named `<prefix>-<run>-XXXXXX`: `<run>` is the
 * marker of one test run (SHROOMS_TEST_RUN, set by test/temp.setup.ts before any test starts), so
 * that run's check at its end can name exactly the folders it made and left — never those of another
 * run on the same host. Outside a marked run the name is `<prefix>-XXXXXX`.
 *
 * A folder made here is the caller's to remove (`remove()` in an afterAll, afterEach or finally,
 * or in the stop() of the helper that made it), also when a test fails.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The environment variable that holds the run's marker. */
export const TEST_RUN_ENV = 'SHROOMS_TEST_RUN';

export interface TempDir {
  readonly path: string;
  /**
   * Removes the folder and all in it; nothing when it is gone already. A process that is still
   * writing there as it stops (ENOTEMPTY, EBUSY) is given a few retries, 100 ms apart.
   */
  remove(): Promise<void>;
}

function template(prefix: string): string {
  const run = process.env[TEST_RUN_ENV];
  return join(tmpdir(), run ? `${prefix}-${run}-` : `${prefix}-`);
}

function handle(path: string): TempDir {
  return { path, remove: () => rm(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }) };
}

/** A new empty folder in the OS temp dir (see the file's comment for its name). */
export async function tempDir(prefix: string): Promise<TempDir> {
  return handle(await mkdtemp(template(prefix)));
}

/** tempDir for a module's top level. */
export function tempDirSync(prefix: string): TempDir {
  return handle(mkdtempSync(template(prefix)));
}

/**
 * What the run `run` made in the OS temp dir and left there: the entries named with its marker,
 * each with the prefix it was made with.
 */
export function leftByRun(run: string, dir = tmpdir()): { name: string; prefix: string }[] {
  const mark = `-${run}-`;
  return readdirSync(dir)
    .filter((name) => name.includes(mark))
    .sort()
    .map((name) => ({ name, prefix: name.slice(0, name.indexOf(mark)) }));
}
