/**
 * The CLI from an installed package, not from a clone, as docs/joining.md says: `scripts/pack.mjs`
 * (`pnpm pack` of the CLI and of every workspace package it needs, their compiled dist/ only),
 * installed with npm into a fresh prefix with production dependencies only; then `shrooms-agent --help`, `mesh init` and `a2a list` run from that
 * prefix. npm fetches the third-party dependencies from the registry (its cache makes reruns quick).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, startMesh, tempDir, type Mesh, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const MACHINE = 'packbox';
let temp: TempDir | undefined;
let tmp: string;
let prefix: string;
let bin: string;
let mesh: Mesh;

const cli = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, cwd: tmp }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

beforeAll(async () => {
  temp = await tempDir('shrooms-installed');
  tmp = temp.path;
  prefix = join(tmp, 'prefix');
  const packs = join(tmp, 'packs');
  await run(process.execPath, [join(REPO_ROOT, 'scripts/pack.mjs'), '--out', packs]);
  const tarballs = (await readdir(packs)).map((f) => join(packs, f));
  await run('npm', ['install', '--prefix', prefix, '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], {
    cwd: tmp,
    maxBuffer: 16 * 1024 * 1024,
  });
  bin = join(prefix, 'node_modules', '.bin', 'shrooms-agent');
  mesh = await startMesh({ machine: MACHINE, sessions: [{ name: 'demo' }], built: true });
}, 600_000);

afterAll(async () => {
  try {
    await mesh?.stop();
  } finally {
    await temp?.remove();
  }
});

describe('the CLI installed from its packages', () => {
  it('holds compiled code and production dependencies only', async () => {
    const agent = join(prefix, 'node_modules', '@shrooms', 'shrooms-agent');
    expect(existsSync(join(agent, 'dist', 'main.js'))).toBe(true);
    expect(existsSync(join(agent, 'src'))).toBe(false);
    // The dashboard's page script, compiled for the browser, comes with the gateway it is served by.
    expect(existsSync(join(prefix, 'node_modules', '@shrooms', 'gateway', 'dist', 'browser', 'app', 'app.js'))).toBe(true);
    for (const dev of ['@shrooms/testing', 'typescript', 'tsx', 'vitest'])
      expect(existsSync(join(prefix, 'node_modules', dev)), dev).toBe(false);
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: shrooms-agent <command>/);
  });

  it('mesh init writes a machine whose units run the installed CLI', async () => {
    const dir = join(tmp, 'mesh');
    const r = await cli(['mesh', 'init', '--mesh', 'home', '--machine', 'hs', '--address', '10.8.0.2', '--dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    const gateway = await readFile(join(dir, 'units', 'shrooms-gateway.service'), 'utf8');
    expect(gateway).toContain(`ExecStart=${process.execPath} ${bin} gateway`);
    // The NATS users come from the generator the package carries.
    expect(await readFile(join(dir, 'permissions.conf'), 'utf8')).toMatch(/user: "?gateway"?/);
  });

  it('a2a list finds the sessions of a running mesh', async () => {
    const r = await cli(['a2a', 'list', '--json'], { SHROOMS_GATEWAY_URL: mesh.gatewayUrl });
    expect(r.code, r.stderr).toBe(0);
    const names = (JSON.parse(r.stdout) as { agents: { name: string }[] }).agents.map((a) => a.name);
    expect(names).toContain(`${MACHINE}/demo`);
  });

  it('up says it needs a clone (its local NATS helpers are not a production dependency)', async () => {
    const r = await cli(['up']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/up runs from a checkout of the repository/);
  });
});
