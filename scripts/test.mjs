#!/usr/bin/env node
// The test command: every vitest project in turn, then one summary line CI can read
// ("N passed, N failed"). Pass project names to run only those: `pnpm test unit e2e`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const all = ['lint', 'typecheck', 'deploy', 'unit', 'e2e', 'harness', 'chaos'];
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const projects = wanted.length ? wanted : all;
const outDir = join(process.cwd(), 'test-output');
mkdirSync(outDir, { recursive: true });

let passed = 0;
let failed = 0;
let skipped = 0;
let broken = false;
if (!wanted.length || wanted.includes('lint')) {
  // Format (and, as it grows, lint) checks: `pnpm format` fixes what this reports.
  console.log('\n=== lint ===');
  const lint = spawnSync('pnpm', ['run', '--silent', 'lint'], { stdio: 'inherit' });
  if (lint.status === 0) passed++;
  else failed++;
}
if (!wanted.length || wanted.includes('typecheck')) {
  console.log('\n=== typecheck ===');
  const tc = spawnSync('pnpm', ['exec', 'tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
  if (tc.status === 0) passed++;
  else failed++;
}
if (!wanted.length || wanted.includes('deploy')) {
  // The deploy files: manifests and compose against their schemas, NATS configs with nats-server -t,
  // and every container command started for real (scripts/check-deploy.mjs).
  console.log('\n=== deploy ===');
  const dc = spawnSync(process.execPath, ['scripts/check-deploy.mjs', '--strict'], { stdio: 'inherit' });
  if (dc.status === 0) passed++;
  else failed++;
}
for (const project of projects.filter((p) => !['lint', 'typecheck', 'deploy'].includes(p))) {
  const report = join(outDir, `vitest-${project}.json`);
  rmSync(report, { force: true });
  console.log(`\n=== ${project} ===`);
  const r = spawnSync(
    'pnpm',
    [
      'exec',
      'vitest',
      'run',
      '--project',
      project,
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
      '--passWithNoTests',
    ],
    {
      stdio: 'inherit',
    },
  );
  try {
    const j = JSON.parse(readFileSync(report, 'utf8'));
    passed += j.numPassedTests;
    failed += j.numFailedTests;
    skipped += j.numPendingTests + j.numTodoTests;
    if (j.numFailedTestSuites > 0 && j.numFailedTests === 0) failed += j.numFailedTestSuites;
  } catch {
    broken = true;
    console.error(`no report from project ${project} (exit ${r.status})`);
  }
  if (r.status !== 0 && !broken && failed === 0) broken = true;
}
if (broken && failed === 0) failed = 1;
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
