/** Limits at their edges (spec §11) and expiry of tasks nobody finished (spec §5). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, rpc, startMesh, type Mesh } from '@shrooms/testing';

let mesh: Mesh;
beforeAll(async () => {
  mesh = await startMesh({
    env: { LIMIT_TASK_EXPIRY_MS: '2500', GATEWAY_EXPIRY_SWEEP_MS: '200' },
    sessions: [
      { name: 'narrow', env: { ECHO_DELAY_MS: '600000', LIMIT_QUEUE_LENGTH: '2' } },
      { name: 'expiring', env: { ECHO_DELAY_MS: '600000' } },
      { name: 'crowded', env: { ECHO_DELAY_MS: '600000', LIMIT_QUEUE_LENGTH: '3' } },
    ],
  });
});
afterAll(async () => {
  await mesh?.stop();
});

const send = (session: string, id: string) =>
  rpc(`${mesh.gatewayUrl}/a2a/${session}`, 'SendMessage', {
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text: id }] },
    configuration: { returnImmediately: true },
  });

it('refuses a new task past the queue length with QUEUE_FULL, and still answers resends', async () => {
  expect((await send('narrow', 'n1')).result.task.id).toBe('narrow:n1');
  await eventually(
    async () => (await rpc(`${mesh.gatewayUrl}/a2a/narrow`, 'GetTask', { id: 'narrow:n1' })).result.status.state === 'TASK_STATE_WORKING',
  );
  expect((await send('narrow', 'n2')).result.task.metadata['shrooms/queued']).toBe(true);
  expect((await send('narrow', 'n3')).result.task.metadata['shrooms/queued']).toBe(true);
  const full = await send('narrow', 'n4');
  expect(full.error).toMatchObject({ code: -32063 });
  expect(full.error.data[0]).toMatchObject({ reason: 'QUEUE_FULL', metadata: { limit: 'queueLength', max: '2' } });
  expect((await send('narrow', 'n3')).result.task.id).toBe('narrow:n3');
  expect((await rpc(`${mesh.gatewayUrl}/a2a/narrow`, 'GetTask', { id: 'narrow:n4' })).error.code).toBe(-32001);
});

it('holds the queue length exactly when many new tasks arrive at once, though their writes run side by side', async () => {
  await send('crowded', 'c0');
  await eventually(
    async () => (await rpc(`${mesh.gatewayUrl}/a2a/crowded`, 'GetTask', { id: 'crowded:c0' })).result.status.state === 'TASK_STATE_WORKING',
  );
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => send('crowded', `c${i + 1}`)));
  const queued = answers.filter((a) => a.result?.task.metadata['shrooms/queued'] === true);
  const full = answers.filter((a) => a.error?.data?.[0]?.reason === 'QUEUE_FULL');
  expect([queued.length, full.length]).toEqual([3, 5]);
  // Each refused task is in no ledger; each accepted one is, waiting.
  for (const a of answers) {
    const id = a.result?.task.id ?? `crowded:c${answers.indexOf(a) + 1}`;
    const got = await rpc(`${mesh.gatewayUrl}/a2a/crowded`, 'GetTask', { id });
    if (a.result) expect(got.result.status.state).toBe('TASK_STATE_SUBMITTED');
    else expect(got.error.code).toBe(-32001);
  }
});

it('expires open tasks nobody finished, working or queued, and frees the session', async () => {
  await send('expiring', 'e1');
  await send('expiring', 'e2');
  for (const id of ['expiring:e1', 'expiring:e2']) {
    const t = await eventually(async () => {
      const r = (await rpc(`${mesh.gatewayUrl}/a2a/expiring`, 'GetTask', { id })).result;
      return r.status.state === 'TASK_STATE_CANCELED' ? r : undefined;
    }, 30_000);
    expect(t.metadata['shrooms/expired']).toBeTruthy();
  }
  // The session works again after its expired task was taken from it.
  await send('expiring', 'e3');
  await eventually(
    async () =>
      (await rpc(`${mesh.gatewayUrl}/a2a/expiring`, 'GetTask', { id: 'expiring:e3' })).result.status.state === 'TASK_STATE_WORKING',
    30_000,
  );
});
