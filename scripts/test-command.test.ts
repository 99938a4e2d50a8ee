import { spawnSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '@shrooms/testing';
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

it('says its usage through ./shrooms before checking for, or installing, anything else', async () => {
  // A PATH with node and the two tools the wrapper's first lines use: no pnpm, npm, apt-get or nats-server.
  const bin = await tempDir('shrooms-bare-path');
  try {
    for (const tool of [process.execPath, '/usr/bin/dirname', '/bin/sed']) symlinkSync(tool, join(bin.path, basename(tool)));
    const wrapper = fileURLToPath(new URL('../shrooms', import.meta.url));
    for (const args of [['test', '--help'], ['--help']]) {
      const r = spawnSync('/bin/bash', [wrapper, ...args], { encoding: 'utf8', env: { PATH: bin.path } });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(args[0] === 'test' ? /^usage: \.\/shrooms test / : /^The front door for a fresh machine/);
    }
  } finally {
    await bin.remove();
  }
});
