import { afterEach, describe, expect, it, vi } from 'vitest';
import { UsageError, commandArgs, parseStrict } from './usage.js';

afterEach(() => vi.restoreAllMocks());

describe("the commands' argument mistakes", () => {
  it('are a UsageError with the first line of what parseArgs says', () => {
    expect(() => parseStrict({ args: ['--nope'], options: {} })).toThrow(UsageError);
    expect(() => parseStrict({ args: ['-n'], options: { n: { type: 'string', short: 'n' } } })).toThrow(
      /^Option '-n, --n <value>' argument missing$/,
    );
  });

  it('are one line on stderr naming the command, and no parse (exit 1)', () => {
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(commandArgs('logs', { args: ['--nope'], options: {} })).toBeUndefined();
    expect(err.mock.calls.map((c) => c[0])).toEqual(["shrooms-agent logs: Unknown option '--nope' (see --help)\n"]);
    expect(commandArgs('logs', { args: ['--n', '3'], options: { n: { type: 'string' } } })?.values).toEqual({ n: '3' });
  });
});
