import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './processes.js';
import { leftByRun, TEST_RUN_ENV, tempDir, tempDirSync, type TempDir } from './temp.js';

describe('tempDir', () => {
  const made: TempDir[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((d) => d.remove()));
  });

  it("names the folder with its prefix and the run's marker, and remove() takes it with all in it", async () => {
    const run = process.env[TEST_RUN_ENV];
    const d = await tempDir('shrooms-temp-test');
    made.push(d);
    expect(basename(d.path)).toMatch(run ? new RegExp(`^shrooms-temp-test-${run}-\\w{6}$`) : /^shrooms-temp-test-\w{6}$/);
    writeFileSync(join(d.path, 'f'), 'x');
    await d.remove();
    expect(existsSync(d.path)).toBe(false);
    await d.remove();
  });

  it("lists what a run left by its marker only, each with its prefix, and never another run's", async () => {
    const saved = process.env[TEST_RUN_ENV];
    try {
      process.env[TEST_RUN_ENV] = 'tmine0001';
      made.push(await tempDir('shrooms-temp-a'), tempDirSync('shrooms-temp-b'));
      process.env[TEST_RUN_ENV] = 'tother001';
      made.push(await tempDir('shrooms-temp-a'));
    } finally {
      if (saved === undefined) delete process.env[TEST_RUN_ENV];
      else process.env[TEST_RUN_ENV] = saved;
    }
    const mine = leftByRun('tmine0001');
    expect(mine.map((l) => l.prefix)).toEqual(['shrooms-temp-a', 'shrooms-temp-b']);
    expect(mine.map((l) => l.name)).toEqual(made.slice(0, 2).map((d) => basename(d.path)));
    await made[0]!.remove();
    expect(leftByRun('tmine0001').map((l) => l.prefix)).toEqual(['shrooms-temp-b']);
  });
});

/**
 * test/temp.setup.ts can name only folders that carry the run's marker: every temporary folder of
 * the tests is made by tempDir. The docker engine keeps its own short names (its folder holds the
 * daemon's socket and containerd's below it, under the length a socket path may have) and removes
 * them in its stop(); its image builds make theirs inside the engine's folder or the image cache.
 */
describe('the temporary folders of the tests', () => {
  const own = new Set([
    'libs/testing/src/temp.ts',
    'libs/testing/src/temp.test.ts',
    'libs/testing/src/docker/engine.ts',
    'libs/testing/src/docker/images.ts',
  ]);

  function* sources(dir: string): Generator<string> {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) yield* sources(path);
      else if (/\.(ts|mjs)$/.test(name)) yield relative(REPO_ROOT, path);
    }
  }

  it('are all made by tempDir, so that a run can name those it left', () => {
    const files = [...sources(join(REPO_ROOT, 'test')), ...sources(join(REPO_ROOT, 'libs/testing/src'))];
    for (const svc of readdirSync(join(REPO_ROOT, 'services')))
      if (existsSync(join(REPO_ROOT, 'services', svc, 'src')))
        files.push(...[...sources(join(REPO_ROOT, 'services', svc, 'src'))].filter((f) => f.endsWith('.test.ts')));
    const direct = files.filter((f) => !own.has(f) && /\bmkdtemp(Sync)?\(/.test(readFileSync(join(REPO_ROOT, f), 'utf8')));
    expect(direct).toEqual([]);
  });
});
