import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { kbIn, rssBytes } from './proc.js';

it('reads a kB figure from /proc text, and NaN for a key that is not there', () => {
  const status = readFileSync('/proc/self/status', 'utf8');
  expect(kbIn(status, 'VmRSS')).toBeGreaterThan(0);
  expect(kbIn(status, 'VmHWM')).toBeGreaterThanOrEqual(kbIn(status, 'VmRSS'));
  expect(kbIn(readFileSync('/proc/self/smaps_rollup', 'utf8'), 'Private_Dirty')).toBeGreaterThan(0);
  expect(kbIn(status, 'NoSuchKey')).toBeNaN();
  // A key that only begins another's name is not that key.
  expect(kbIn('VmRSSX:\t 12 kB\n', 'VmRSS')).toBeNaN();
});

it("reads a live process's resident set in bytes, and nothing once it is gone", async () => {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  try {
    const rss = await rssBytes(child.pid!);
    expect(rss).toBeGreaterThan(1024 * 1024);
    expect(rss! % 1024).toBe(0);
  } finally {
    child.kill();
  }
  await once(child, 'exit');
  expect(await rssBytes(child.pid!)).toBeUndefined();
});
