/**
 * `shrooms-agent a2a send|get --wait` while the task does not finish: the wait ends first (exit 0, the
 * task as it stands), the task is canceled meanwhile (exit 2), Ctrl-C stops the wait and not the task
 * (exit 130), and a queued task says what it waits for — the task its worker is on, how many wait, or
 * no bridge at all. Each command a subprocess against a mesh of real processes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClientMesh, startSleepingSession, type ClientMesh } from './support/client-mesh.js';

const M = 'waitbox';
let mesh: ClientMesh;

beforeAll(async () => {
  // busy works on its first task for ten minutes; sleepy has a queue in the ledger and no bridge.
  mesh = await startClientMesh({ machine: M, sessions: [{ name: 'busy', env: { ECHO_DELAY_MS: '600000' } }] });
  await startSleepingSession(mesh, 'sleepy');
});
afterAll(async () => {
  await mesh?.stop();
});

const json = (s: string) => JSON.parse(s) as any;

describe('a wait that the task outlasts', () => {
  it('send --wait returns the task as it stands when the wait ends first (exit 0)', async () => {
    const r = await mesh.cli(['a2a', 'send', 'sleepy', 'are you there', '--wait', '--wait-seconds', '1', '--json']);
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({
      agent: `${M}/sleepy`,
      status: 'queued',
      waitedOut: true,
      finished: false,
      note: `no bridge serves ${M}/sleepy: the task waits in its queue until one starts`,
    });
  });

  it('says what a queued task waits for: the task its worker is on, and how many wait', async () => {
    const first = json((await mesh.cli(['a2a', 'send', 'busy', 'the long one', '--json'])).stdout).task;
    await expect
      .poll(async () => json((await mesh.cli(['a2a', 'get', first, '--json'])).stdout).status, { timeout: 30_000 })
      .toBe('working');
    const id = `cli-test-behind-${Date.now()}`;
    const second = `${M}/busy:${id}`;
    const waiting = mesh.spawnCli(['a2a', 'send', 'busy', 'after that', '--id', id, '--wait', '--wait-seconds', '600']);
    await waiting.waitFor(new RegExp(`^${second} queued \\(${M}/busy works on ${first}\\)$`, 'm'), 30_000);
    const third = json((await mesh.cli(['a2a', 'send', 'busy', 'and then this', '--json'])).stdout).task;
    // The count comes from the bridge's signal, renewed on each change of its queue.
    await expect
      .poll(async () => (await mesh.cli(['a2a', 'get', third])).stdout, { timeout: 30_000 })
      .toBe(`${third} queued, asked by ${M}\n${M}/busy works on ${first}; 2 tasks wait in its queue\n`);
    const listed = json((await mesh.cli(['a2a', 'list', '--json'])).stdout);
    expect(listed.agents.find((a: { name: string }) => a.name === `${M}/busy`)).toMatchObject({ state: 'working', task: first });
    const human = (await mesh.cli(['a2a', 'list'])).stdout;
    expect(human).toMatch(new RegExp(`^${M}/busy\\s+echo\\s+working\\s+${first.split(':')[1]}\\s+`, 'm'));
    waiting.child.kill('SIGINT');
    for (const t of [first, second, third]) expect((await mesh.cli(['a2a', 'cancel', t])).code).toBe(0);
  });

  it('a task canceled while send --wait waits ends it with exit 2, and get says so too', async () => {
    const id = `cli-test-${Date.now()}`;
    const task = `${M}/sleepy:${id}`;
    const waiting = mesh.spawnCli(['a2a', 'send', 'sleepy', 'never mind', '--id', id, '--wait']);
    await expect.poll(async () => (await mesh.cli(['a2a', 'get', task])).code, { timeout: 30_000 }).toBe(0);
    const cancel = await mesh.cli(['a2a', 'cancel', task, '--json']);
    expect(cancel.code).toBe(0);
    expect(json(cancel.stdout).status).toBe('canceled');
    await expect.poll(() => waiting.child.exitCode, { timeout: 30_000 }).toBe(2);
    expect(waiting.output()).toMatch(new RegExp(`${task} canceled`));
    const get = await mesh.cli(['a2a', 'get', task]);
    expect(get.code).toBe(2);
  });

  it('Ctrl-C while send --wait waits stops the wait, not the task, and says how to follow it (exit 130)', async () => {
    const id = `cli-test-int-${Date.now()}`;
    const task = `${M}/sleepy:${id}`;
    const waiting = mesh.spawnCli(['a2a', 'send', 'sleepy', 'take your time', '--id', id, '--wait']);
    await expect.poll(async () => (await mesh.cli(['a2a', 'get', task])).code, { timeout: 30_000 }).toBe(0);
    await waiting.waitFor(
      new RegExp(`${task} queued \\(no bridge serves ${M}/sleepy: the task waits in its queue until one starts\\)`),
      30_000,
    );
    waiting.child.kill('SIGINT');
    await expect.poll(() => waiting.child.exitCode, { timeout: 30_000 }).toBe(130);
    expect(waiting.output()).toContain(
      `stopped waiting; ${task} goes on: follow it with shrooms-agent a2a get ${task} --wait, or cancel it with shrooms-agent a2a cancel ${task}`,
    );
    const after = await mesh.cli(['a2a', 'get', task, '--json']);
    expect(json(after.stdout).status).toBe('queued');
    await mesh.cli(['a2a', 'cancel', task]);
  });
});
