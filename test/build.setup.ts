/**
 * Global setup of the cross-process projects: what people run is the compiled CLI (units and MCP
 * configs name its bundle, services/shrooms-agent/bundle, and `up` runs it), so it is built first when a source is
 * newer than the last build (scripts/build.mjs; a walk of the sources when nothing changed).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '@shrooms/testing';

export default function setup(): void {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/build.mjs')], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`scripts/build.mjs failed (exit ${r.status ?? r.signal})`);
}
