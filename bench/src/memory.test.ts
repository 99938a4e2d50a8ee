import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { privateMemoryMb, procMemoryMb } from './memory.js';

it("reads a process's private memory as part of its RSS", () => {
  const own = privateMemoryMb(process.pid);
  const rss = procMemoryMb(process.pid)?.rss;
  expect(own).toBeGreaterThan(0);
  expect(rss).toBeGreaterThan(0);
  // Private pages are resident pages; the rest of the RSS is the binary and libraries it shares.
  expect(own!).toBeLessThan(rss!);
});

it('reads nothing of a process that is gone', () => {
  const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
  expect(privateMemoryMb(gone)).toBeNull();
  expect(procMemoryMb(gone)).toBeNull();
});
