import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NODE_PINS, parseNodeVersions } from './node-versions.mjs';

const script = fileURLToPath(new URL('./node-versions.mjs', import.meta.url));

describe('parseNodeVersions', () => {
  it('maps a major to its pin, takes an exact version as it is, and reads lists', () => {
    expect(parseNodeVersions(['22,24'])).toEqual([NODE_PINS[22], NODE_PINS[24]]);
    expect(parseNodeVersions(['v24.21.0', ' 22 ', ''])).toEqual(['24.21.0', NODE_PINS[22]]);
    expect(parseNodeVersions([])).toEqual([]);
  });

  it('refuses what is neither, saying what to give', () => {
    for (const bad of ['25', '24.x', 'latest', '24.21'])
      expect(() => parseNodeVersions([bad])).toThrow(`--node ${bad}: give a major (22, 24) or an exact version such as 24.21.0`);
  });
});

describe('node-versions.mjs as a command', () => {
  it('exits 1 on a value it cannot read, before installing anything, and prints no path', () => {
    const r = spawnSync(process.execPath, [script, '24', 'lts'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe('--node lts: give a major (22, 24) or an exact version such as 24.21.0');
  });
});
