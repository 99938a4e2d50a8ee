/**
 * A service's log on a terminal is lines a person reads (`12:31:56.677 INFO  [gateway] starting`);
 * piped (a file, a container, up's logs) it stays JSON, and LOG_FORMAT chooses either way. The
 * terminal is a real pseudo-terminal (`script`, util-linux), the service the compiled CLI's gateway
 * pointed at a NATS that is not there (it logs its start, then that NATS cannot be reached).
 */
import { spawn } from 'node:child_process';
import { CLI, nodeArgs, runTs } from '@shrooms/testing';
import { expect, it } from 'vitest';

const env = { NATS_URL: 'nats://127.0.0.1:1', GATEWAY_PORT: '0', LOG_LEVEL: 'info' };
const TEXT_START = /^\d\d:\d\d:\d\d\.\d{3} INFO {2}\[gateway\] starting$/m;

/** The gateway's output until it says `until`, or what it said in 20 s; the gateway is stopped after. */
function outputOf(cmd: string, args: string[], extra: Record<string, string>, until: RegExp): Promise<string> {
  const child = spawn(cmd, args, { env: { ...process.env, ...env, ...extra }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve(out);
    };
    const timer = setTimeout(done, 20_000);
    const take = (d: Buffer) => {
      out += d.toString('utf8').replace(/\r\n/g, '\n');
      if (until.test(out)) done();
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
  });
}

it('writes lines a person reads on a terminal, JSON when piped, and as LOG_FORMAT says', async () => {
  const gateway = [process.execPath, ...nodeArgs(CLI, true), 'gateway'].join(' ');
  const onTerminal = await outputOf('script', ['-qefc', gateway, '/dev/null'], {}, TEXT_START);
  expect(onTerminal).toMatch(TEXT_START);
  expect(onTerminal).not.toMatch(/^\{"level"/m);
  // Told JSON, it writes JSON on a terminal too.
  const json = await outputOf('script', ['-qefc', gateway, '/dev/null'], { LOG_FORMAT: 'json' }, /"msg":"starting"/);
  expect(json).toMatch(/^\{"level":30,.*"msg":"starting"/m);
  // Piped: JSON, unless told text.
  const piped = runTs(CLI, ['gateway'], env, { built: true });
  try {
    await piped.waitFor(/"msg":"starting"/, 20_000);
    expect(piped.output()).toMatch(/^\{"level":30,.*"msg":"starting"/m);
  } finally {
    await piped.kill();
  }
  const pipedText = runTs(CLI, ['gateway'], { ...env, LOG_FORMAT: 'text' }, { built: true });
  try {
    await pipedText.waitFor(TEXT_START, 20_000);
  } finally {
    await pipedText.kill();
  }
});
