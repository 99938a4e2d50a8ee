/**
 * A client wait (what `ask_agent` and `a2a send --wait` use) across a gateway restart: the stream
 * drops and the next GetTask finds nobody, yet the wait keeps following the same task and sees it
 * settle once the gateway is back, instead of throwing a retryable error that invites a second task.
 */
import { ShroomsClient } from '@shrooms/client';
import { eventually, startMesh, type Mesh } from '@shrooms/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

let mesh: Mesh;
beforeAll(async () => {
  mesh = await startMesh({ machine: 'waitbox', sessions: [{ name: 'slow', env: { ECHO_DELAY_MS: '600000' } }] });
});
afterAll(async () => {
  await mesh?.stop();
});

it('keeps following a task while its gateway restarts, and sees it settle afterwards', async () => {
  let failedGets = 0;
  const countingFetch: typeof fetch = async (input, init) => {
    try {
      return await fetch(input, init);
    } catch (e) {
      if (typeof init?.body === 'string' && init.body.includes('"GetTask"')) failedGets++;
      throw e;
    }
  };
  const client = new ShroomsClient({ gatewayUrl: mesh.gatewayUrl, machine: mesh.machine, fetch: countingFetch });
  try {
    const sent = await client.send({ to: 'slow', text: 'a long job' });
    const states: string[] = [];
    const outcome = client
      .wait(sent.ref.task, { timeoutMs: 120_000, retryMs: 50, onUpdate: (t) => states.push(t.status.state) }, sent.task)
      .then(
        (r) => ({ r }),
        (e: unknown) => ({ e }),
      );
    await eventually(() => states.includes('TASK_STATE_WORKING'), 60_000);

    await mesh.gateway.kill();
    // The wait has now read the task while nobody answered: before, that error ended it.
    await eventually(() => failedGets > 0, 60_000);
    await mesh.startGateway();
    await client.cancel(sent.ref.task);

    const done = await outcome;
    if ('e' in done) throw done.e;
    const { r } = done;
    expect(r.settled).toBe(true);
    expect(r.task.id).toBe(sent.task.id);
    expect(r.task.status.state).toBe('TASK_STATE_CANCELED');
  } finally {
    await client.close();
  }
});
