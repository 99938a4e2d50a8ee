import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@shrooms/testing';
import { createLogger } from '@shrooms/runtime';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPolicyFile, parsePolicy } from './file.js';

const log = createLogger('guard-test', 'silent');

describe('parsePolicy', () => {
  it('reads YAML', () => {
    const p = parsePolicy('default:\n  agentTasks: true\nsessions:\n  "pi5/*":\n    devices: [laptop.home]\n');
    expect(p).toEqual({ default: { agentTasks: true }, sessions: { 'pi5/*': { devices: ['laptop.home'] } } });
  });

  it('reads JSON', () => {
    expect(parsePolicy('{"sessions":{"a/b":{"agents":[]}}}')).toEqual({ sessions: { 'a/b': { agents: [] } } });
  });

  it('takes an empty file as the empty policy', () => {
    expect(parsePolicy('')).toEqual({});
  });

  it('names the problem in a bad policy', () => {
    expect(() => parsePolicy('sessions:\n  a/b:\n    devises: [x]\n', 'p.yaml')).toThrow(/p.yaml: .*devises/);
    expect(() => parsePolicy('default: {agentTasks: maybe}')).toThrow(/agentTasks/);
    expect(() => parsePolicy('{ not: [valid')).toThrow(/not YAML or JSON/);
  });
});

describe('loadPolicyFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'guard-policy-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses to start on a bad file', async () => {
    const path = join(dir, 'policy.yaml');
    await writeFile(path, 'sessions: 3');
    await expect(loadPolicyFile(path, { debounceMs: 10, log })).rejects.toThrow(/sessions/);
  });

  it('reloads after the file changes, also when it is replaced by a rename', async () => {
    const path = join(dir, 'policy.yaml');
    await writeFile(path, 'default: {agentTasks: false}\n');
    const w = await loadPolicyFile(path, { debounceMs: 10, log });
    try {
      await writeFile(path, 'default: {agentTasks: true}\n');
      await eventually(() => w.current().default?.agentTasks === true);
      await writeFile(join(dir, 'next.tmp'), 'sessions: {"a/b": {devices: [x]}}\n');
      await rename(join(dir, 'next.tmp'), path);
      await eventually(() => w.current().sessions?.['a/b'] !== undefined);
    } finally {
      w.close();
    }
  });

  it('keeps the last good policy when a change does not parse', async () => {
    const path = join(dir, 'policy.yaml');
    await writeFile(path, 'default: {agentTasks: true}\n');
    let reloads = 0;
    const rejected: Error[] = [];
    const w = await loadPolicyFile(path, { debounceMs: 10, log, onChange: () => reloads++, onRejected: (e) => rejected.push(e) });
    try {
      await writeFile(path, 'default: {agentTasks: [nonsense\n');
      // The watcher read the bad file and refused it; the policy in force is still the good one.
      await eventually(() => rejected.length === 1);
      expect(rejected[0]!.message).toMatch(/not YAML or JSON/);
      expect(w.current()).toEqual({ default: { agentTasks: true } });
      expect(reloads).toBe(0);
      await writeFile(path, 'default: {agentTasks: false}\n');
      await eventually(() => w.current().default?.agentTasks === false);
      expect(reloads).toBeGreaterThanOrEqual(1);
    } finally {
      w.close();
    }
  });
});
