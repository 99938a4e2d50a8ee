import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually, tempDir, type TempDir } from '@shrooms/testing';
import { createLogger } from '@shrooms/runtime';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '@shrooms/runtime';
import { holdsNoPolicy, loadPolicyFile, parsePolicy } from './file.js';

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

  it('tells a file with no policy (empty, blanks, comments) from an explicit empty one', () => {
    for (const text of ['', '\n  \n', '# nothing yet\n']) expect(holdsNoPolicy(text)).toBe(true);
    for (const text of ['{}', 'default: {}', '{ not: [valid']) expect(holdsNoPolicy(text)).toBe(false);
  });

  it('names the problem in a bad policy', () => {
    expect(() => parsePolicy('sessions:\n  a/b:\n    devises: [x]\n', 'p.yaml')).toThrow(/p.yaml: .*devises/);
    expect(() => parsePolicy('default: {agentTasks: maybe}')).toThrow(/agentTasks/);
    expect(() => parsePolicy('{ not: [valid')).toThrow(/not YAML or JSON/);
  });
});

describe('loadPolicyFile', () => {
  let temp: TempDir;
  let dir: string;
  beforeEach(async () => {
    temp = await tempDir('guard-policy');
    dir = temp.path;
  });
  afterEach(async () => {
    await temp.remove();
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

  /** A logger that keeps its warnings (the guard's is pino; only what it is told matters here). */
  function warnings(): { log: Logger; said: string[] } {
    const said: string[] = [];
    const log = {
      child: () => log,
      info: () => {},
      warn: (o: unknown, m?: string) => said.push(`${m ?? ''} ${JSON.stringify(o)}`),
      error: (o: unknown, m?: string) => said.push(`${m ?? ''} ${JSON.stringify(o)}`),
    };
    return { log: log as unknown as Logger, said };
  }

  it('keeps the last good policy when the file is emptied, as a writer truncating it leaves it, and says why', async () => {
    const path = join(dir, 'policy.yaml');
    await writeFile(path, 'sessions: {"a/b": {devices: [laptop.home]}}\n');
    const { log, said } = warnings();
    const rejected: Error[] = [];
    const w = await loadPolicyFile(path, { debounceMs: 10, log, onRejected: (e) => rejected.push(e) });
    try {
      await writeFile(path, '');
      await eventually(() => rejected.length === 1);
      expect(rejected[0]!.message).toMatch(/is empty .*write \{\} to open the policy on purpose/);
      expect(w.current()).toEqual({ sessions: { 'a/b': { devices: ['laptop.home'] } } });
      expect(said.join('\n')).toMatch(/keeping the last good policy.*is empty/);
      // Opening it on purpose is a file that says so.
      await writeFile(path, '{}\n');
      await eventually(() => Object.keys(w.current()).length === 0);
    } finally {
      w.close();
    }
  });

  it('keeps the last good policy while the file cannot be read, then takes the file that comes back', async () => {
    const path = join(dir, 'policy.yaml');
    await writeFile(path, 'default: {agentTasks: true}\n');
    const rejected: Error[] = [];
    const w = await loadPolicyFile(path, { debounceMs: 10, log, onRejected: (e) => rejected.push(e) });
    try {
      await rm(path);
      await eventually(() => rejected.length >= 1);
      expect(rejected[0]!.message).toMatch(/cannot be read \(ENOENT\)/);
      expect(w.current()).toEqual({ default: { agentTasks: true } });
      await writeFile(path, 'default: {agentTasks: false}\n');
      await eventually(() => w.current().default?.agentTasks === false);
    } finally {
      w.close();
    }
  });

  it('takes an empty file at start as the empty policy, with a warning, and an empty file after it changes nothing', async () => {
    const path = join(dir, 'policy.yaml');
    await writeFile(path, '');
    const { log, said } = warnings();
    const changes: unknown[] = [];
    const w = await loadPolicyFile(path, { debounceMs: 10, log, onChange: (p) => changes.push(p) });
    try {
      expect(w.current()).toEqual({});
      expect(said.join('\n')).toMatch(/policy file is empty: everyone on the mesh/);
      await writeFile(path, '# still nothing\n');
      await eventually(() => changes.length >= 1);
      expect(w.current()).toEqual({});
    } finally {
      w.close();
    }
  });
});
