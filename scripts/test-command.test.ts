import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const script = fileURLToPath(new URL('./test.mjs', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 20_000 });

it('says its usage for --help, running nothing', () => {
  const r = run('--help');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^usage: \.\/shrooms test \[PROJECT \.\.\.\] \[--node 22,24\]/);
  expect(r.stdout).toContain('The projects: lint typecheck deploy');
  expect(r.stdout).not.toContain('=== lint');
});

it('refuses an option it does not know instead of running every project', () => {
  const r = run('unit', '--nod', '22');
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/^unknown option --nod\nusage:/);
  expect(r.stdout).toBe('');
});
