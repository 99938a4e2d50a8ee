import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '@shrooms/runtime';
import { isRunning } from '@shrooms/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonlChild } from './child.js';

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
});

/**
 * A CLI (here `sh`) that starts a command of its own in the background, says its pid, and then
 * finishes as the case needs: the command must not outlive it.
 */
async function cliWithCommand(then: string): Promise<{ child: JsonlChild; command: number }> {
  let said: (pid: number) => void;
  const pid = new Promise<number>((r) => (said = r));
  const child = new JsonlChild({ command: 'sh', args: ['-c', `sleep 300 & echo "{\\"pid\\": $!}"; ${then}`] }, [], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '' },
    log: createLogger('child-test', 'silent'),
    onValue: (v) => said(Number(v.pid)),
    onExit: () => {},
  });
  const command = await pid;
  started.push(command);
  return { child, command };
}

describe('JsonlChild', () => {
  it('stops what the CLI started when the CLI itself ends on EOF', async () => {
    const { child, command } = await cliWithCommand('read line');
    await child.stop();
    expect(isRunning(command)).toBe(false);
  });

  it('stops what the CLI started when the CLI dies on its own', async () => {
    const { child, command } = await cliWithCommand('exit 3');
    expect((await child.exited).code).toBe(3);
    for (let i = 0; i < 100 && isRunning(command); i++) await sleep(50);
    expect(isRunning(command)).toBe(false);
  });
});
