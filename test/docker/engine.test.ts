/**
 * The private engine helper leaves nothing behind: after stop() no daemon or containerd process, no
 * mount, no bridge and no folder of its own remain — also when containers were still running.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { importBaseImage, run, startDockerEngine } from '@shrooms/testing';
import { describe, expect, inject, it } from 'vitest';

const docker = inject('docker');

function processesNaming(dir: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.skipIf(!docker)('private Docker engine', () => {
  it('stops with nothing left: processes, mounts, bridge, folder', async () => {
    const engine = await startDockerEngine({ prefix: 'shd' });
    const { dir } = engine;
    try {
      const { tag } = await importBaseImage(engine);
      await engine.docker(['run', '-d', '--network', 'none', tag, 'sleep', '600']);
      expect((await engine.docker(['ps', '-q'])).trim()).not.toBe('');
      expect(processesNaming(dir).length).toBeGreaterThan(0);
      expect(readFileSync('/proc/self/mountinfo', 'utf8')).toContain(dir);
      expect(await run('ip', ['-o', '-4', 'addr', 'show'])).toContain(`${engine.bridgeAddress}/`);
    } finally {
      await engine.stop();
    }
    expect(processesNaming(dir)).toEqual([]);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(dir);
    expect(existsSync(dir)).toBe(false);
    const addresses = await run('ip', ['-o', '-4', 'addr', 'show']);
    expect(addresses).not.toContain(`${engine.bridgeAddress}/`);
  });
});
