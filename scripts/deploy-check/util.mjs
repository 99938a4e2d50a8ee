/** Small helpers shared by the deploy checks. */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { bundleDir } from '../bundle.mjs';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function readYaml(path) {
  return parseYaml(readFileSync(path, 'utf8'), { merge: true });
}

/** Every document of a multi-document YAML text (empty ones dropped); throws on a syntax error. */
export function yamlDocuments(text, origin) {
  const docs = [];
  for (const d of parseAllDocuments(text, { merge: true })) {
    if (d.errors.length) throw new Error(`${origin}: ${d.errors[0].message}`);
    const v = d.toJS();
    if (v !== null && v !== undefined) docs.push(v);
  }
  return docs;
}

/** `KEY=VALUE` lines (comments and blanks skipped), as docker compose and kustomize read them. */
export function readEnvFile(path) {
  const out = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#')) continue;
    const eq = t.indexOf('=');
    if (eq > 0)
      out[t.slice(0, eq).trim()] = t
        .slice(eq + 1)
        .trim()
        .replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

export function natsServerBinary() {
  if (process.env.NATS_SERVER_BIN) return process.env.NATS_SERVER_BIN;
  for (const p of ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server']) if (existsSync(p)) return p;
  return 'nats-server';
}

export function onPath(cmd) {
  return (process.env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, cmd)));
}

export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 60_000, ...opts });
  return { code: r.status ?? (r.error ? 127 : 1), out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim(), error: r.error };
}

export function freePort() {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolvePort(port));
    });
  });
}

/** Workspace packages: name → folder (relative to the repo root). */
export function workspacePackages(root = REPO_ROOT) {
  const out = new Map();
  for (const group of ['libs', 'services', '.']) {
    const base = join(root, group);
    const dirs = group === '.' ? ['bench', 'test'] : safeList(base);
    for (const d of dirs) {
      const pj = join(base, d, 'package.json');
      if (existsSync(pj)) out.set(JSON.parse(readFileSync(pj, 'utf8')).name, join(group, d));
    }
  }
  return out;
}

function safeList(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/**
 * The CLI's commands, from its own `--help` (the one source), and how to start it: from source
 * through tsx (default) or built and bundled (`built`).
 */
export function cliInfo({ built = false, root = REPO_ROOT } = {}) {
  const argv = built
    ? [join(bundleDir(root), 'main.js')]
    : ['--conditions=development', '--import', 'tsx', join(root, 'services/shrooms-agent/src/main.ts')];
  const r = run(process.execPath, [...argv, '--help'], { cwd: root });
  const commands = new Set();
  for (const line of r.out.split('\n')) {
    const m = /^ {2}([a-z][a-z0-9-]*)\s{2,}/.exec(line);
    if (m) commands.add(m[1]);
  }
  return { argv, commands, helpOk: r.code === 0 && commands.size > 0, helpOutput: r.out };
}

/** SERVICE_NAMES from the protocol's subjects module (the one source of names). */
export function serviceNames(root = REPO_ROOT) {
  const text = readFileSync(join(root, 'libs/protocol/src/subjects.ts'), 'utf8');
  const block = /export const SERVICE_NAMES = \{([^}]*)\}/.exec(text)?.[1] ?? '';
  const out = {};
  for (const m of block.matchAll(/(\w+):\s*'([^']+)'/g)) out[m[1]] = m[2];
  return out;
}

/** The service a CLI command runs, as registered with the NATS services API. */
export function serviceOfCommand(command, names) {
  return { gateway: names.gateway, bridge: names.bridge, guard: names.guard, scheduler: names.scheduler }[command];
}
