import { afterEach, describe, expect, it, vi } from 'vitest';
import { UsageError, commandArgs, parseStrict } from './usage.js';

afterEach(() => vi.restoreAllMocks());

describe("the commands' argument mistakes", () => {
  it('are a UsageError saying in a line what was wrong', () => {
    const mistake = (config: Parameters<typeof parseStrict>[0]) => {
      try {
        parseStrict(config);
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return (err as Error).message;
      }
      throw new Error('parsed');
    };
    expect(mistake({ args: ['--nope'], options: {} })).toBe('unknown option --nope');
    expect(mistake({ args: ['-x'], options: {}, allowPositionals: true })).toBe(
      'unknown option -x (text that starts with "-" goes after --: -- "-x")',
    );
    expect(mistake({ args: ['-n'], options: { n: { type: 'string', short: 'n' } } })).toBe('-n/--n needs a value');
    expect(mistake({ args: ['--standby=yes'], options: { standby: { type: 'boolean' } } })).toBe('--standby takes no value');
    expect(mistake({ args: ['extra'], options: {} })).toBe('unexpected argument extra: this command takes options only');
  });

  it('are one line on stderr naming the command, and no parse (exit 1)', () => {
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(commandArgs('logs', { args: ['--nope'], options: {} })).toBeUndefined();
    expect(err.mock.calls.map((c) => c[0])).toEqual(['shrooms-agent logs: unknown option --nope (see --help)\n']);
    expect(commandArgs('logs', { args: ['--n', '3'], options: { n: { type: 'string' } } })?.values).toEqual({ n: '3' });
  });
});
