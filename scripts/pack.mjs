#!/usr/bin/env node
// Packs the CLI for installing without a clone: builds (scripts/build.mjs), then `pnpm pack` of
// @shrooms/shrooms-agent and of every workspace package it needs to run (their compiled dist/, the
// workspace: and catalog: versions made real), into one folder. Install them together:
//
//   node scripts/pack.mjs --out /tmp/shrooms-packs
//   npm install --prefix ~/.local/share/shrooms --omit=dev /tmp/shrooms-packs/*.tgz   # one tree, not -g
//   ~/.local/share/shrooms/node_modules/.bin/shrooms-agent --help          (docs/joining.md)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
if (!values.out) {
  console.error('usage: node scripts/pack.mjs --out DIR');
  process.exit(1);
}
const out = resolve(values.out);

/** The folders of `name` and of every workspace package it depends on to run (not devDependencies). */
function runtimeClosure(name) {
  const dirs = new Map();
  for (const group of ['libs', 'services'])
    for (const e of readdirSync(join(root, group), { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const dir = join(root, group, e.name);
      dirs.set(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name, dir);
    }
  const seen = new Set();
  const visit = (n) => {
    const dir = dirs.get(n);
    if (!dir || seen.has(dir)) return;
    seen.add(dir);
    const deps = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies ?? {};
    for (const [dep, spec] of Object.entries(deps)) if (String(spec).startsWith('workspace:')) visit(dep);
  };
  visit(name);
  return [...seen];
}

execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
mkdirSync(out, { recursive: true });
for (const dir of runtimeClosure('@shrooms/shrooms-agent'))
  execFileSync('pnpm', ['pack', '--pack-destination', out], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
console.log(`packed into ${out}; install with:\n  npm install --prefix PREFIX --omit=dev ${join(out, '*.tgz')}`);
