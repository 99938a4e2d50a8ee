/**
 * Global setup of the unit project: the dashboard's page script is compiled browser code (tsc -b
 * of services/gateway/src/dashboard/app, its own project), which the gateway's tests serve; built
 * here when a source changed, so the unit tests run from a fresh clone (up to date: a check).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { REPO_ROOT } from '@shrooms/testing';

export default function setup(): void {
  const tsc = createRequire(join(REPO_ROOT, 'package.json')).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-b', join(REPO_ROOT, 'services/gateway/src/dashboard/app')], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`the dashboard's page script did not build (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
}
