#!/usr/bin/env node
// Other Node versions than this machine's, for the test command and the bench (`--node 22,24`):
// a major maps to the pinned exact version below, so a run is the same run everywhere. Each comes
// from the npm registry's `node` package, installed once per version into the cache folder
// SHROOMS_NODE_CACHE (default: $XDG_CACHE_HOME/shrooms/node, else ~/.cache/shrooms/node).
//
//   node scripts/node-versions.mjs 22 24       prints each one's `node` binary, installing it if missing
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `--node 22` and `--node 24` mean. */
export const NODE_PINS = { 22: '22.23.3', 24: '24.21.0' };

const cacheDir = process.env.SHROOMS_NODE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'shrooms', 'node');

/**
 * Exact versions from `--node` values ("22,24", "v24.21.0"); throws saying what to give for one
 * that is neither a pinned major nor an exact version.
 */
export function parseNodeVersions(values) {
  const versions = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim().replace(/^v/, ''))
    .filter(Boolean)
    .map((v) => NODE_PINS[v] ?? v);
  for (const v of versions)
    if (!/^\d+\.\d+\.\d+$/.test(v))
      throw new Error(`--node ${v}: give a major (${Object.keys(NODE_PINS).join(', ')}) or an exact version such as 24.21.0`);
  return versions;
}

/** The `node` binary of `version`, installed into the cache from the npm registry when missing. */
export function nodeBinary(version) {
  const dir = join(cacheDir, version);
  const bin = join(dir, 'node_modules', '.bin', 'node');
  const works = () => existsSync(bin) && spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.trim() === `v${version}`;
  if (works()) return bin;
  // On stderr: a caller reading the binaries' paths from stdout gets only those.
  console.error(`installing Node ${version} from the npm registry into ${dir}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
  // npm warns that the package's install script is not approved; the binary works without it.
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `node@${version}`], {
    cwd: dir,
    stdio: ['ignore', 2, 2],
  });
  if (r.status !== 0 || !works()) throw new Error(`could not install Node ${version} into ${dir} (npm exit ${r.status})`);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    for (const v of parseNodeVersions(process.argv.slice(2))) console.log(nodeBinary(v));
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}
