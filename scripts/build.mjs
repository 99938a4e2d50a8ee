#!/usr/bin/env node
// Compiles what people run (`tsc -b tsconfig.build.json`: every library and service, the CLI and
// the bench last, into each package's dist/) — only when a source is newer than the last build. `./shrooms` and
// `pnpm shrooms-agent` call it first; an up-to-date tree costs a walk of the sources (tens of
// milliseconds), a change recompiles only the projects it touches (tsc's own incremental build).
// Then it bundles the compiled CLI with its dependencies into services/shrooms-agent/bundle/ (bundle.mjs):
// what `./shrooms`, `up`, the units and MCP configs run.
//
//   node scripts/build.mjs            build if needed (quiet when nothing changed)
//   node scripts/build.mjs --force    build regardless (tsc -b still skips what is up to date)
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleCli, bundleMissing } from './bundle.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Written after each good build; its mtime is when that build started. */
const STAMP = join(root, 'node_modules', '.cache', 'shrooms', 'built');
const TOP = ['tsconfig.base.json', 'tsconfig.build.json', 'package.json', 'pnpm-lock.yaml', 'scripts/build.mjs', 'scripts/bundle.mjs'];

/** mtime (ms) of the newest input of the build: sources, package manifests and tsconfigs. */
function newestInput() {
  let newest = 0;
  const see = (file) => {
    try {
      newest = Math.max(newest, statSync(file).mtimeMs);
    } catch {
      // a file that vanished while we looked is no input
    }
  };
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    see(dir); // a deleted or renamed file changes its folder
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if ((e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) || e.name === 'tsconfig.json') see(p);
    }
  };
  for (const f of TOP) see(join(root, f));
  for (const group of ['libs', 'services'])
    for (const pkg of readdirSync(join(root, group), { withFileTypes: true })) {
      if (!pkg.isDirectory()) continue;
      const dir = join(root, group, pkg.name);
      see(join(dir, 'package.json'));
      see(join(dir, 'tsconfig.json'));
      walk(join(dir, 'src'));
    }
  see(join(root, 'bench', 'package.json'));
  see(join(root, 'bench', 'tsconfig.json'));
  walk(join(root, 'bench', 'src'));
  return newest;
}

function stampTime() {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return 0;
  }
}

const force = process.argv.includes('--force');
if (force || newestInput() >= stampTime() || bundleMissing(root)) {
  const started = new Date();
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  process.stderr.write('building (tsc -b tsconfig.build.json)\n');
  const r = spawnSync(process.execPath, [tsc, '-b', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    process.stderr.write('the build failed (above); fix it, or run the sources with `pnpm dev <command>`\n');
    process.exit(r.status ?? 1);
  }
  await bundleCli(root);
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  // The stamp says when the build started: a file saved during it is newer and builds next time.
  utimesSync(STAMP, started, started);
}
