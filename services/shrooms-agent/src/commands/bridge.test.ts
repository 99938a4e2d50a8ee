import { describe, expect, it } from 'vitest';
import { absoluteImports } from './bridge.js';

describe('the CLI a session runs', () => {
  it('makes a bare --import absolute, so the session can run it from its own folder', () => {
    const out = absoluteImports(['--conditions=development', '--import', 'tsx', '--import=tsx', '--import', './local.mjs']);
    expect(out[0]).toBe('--conditions=development');
    expect(out[2]).toMatch(/^file:\/\/.*tsx/);
    expect(out[3]).toMatch(/^--import=file:\/\/.*tsx/);
    expect(out[5]).toBe('./local.mjs');
  });
});
