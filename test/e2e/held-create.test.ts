/**
 * A new task whose sender waits for its end (a blocking SendMessage) is created with its next change
 * when the worker is quick: gateway, bridge and echo harness as separate processes, the ledger read by
 * the test's own connection. A send whose sender is told of the task at once is stored before the
 * answer (docs/reliability.md).
 */
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { Ledger, SignalField } from '@shrooms/ledger';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, rpc, startMesh, type Mesh } from '@shrooms/testing';

let mesh: Mesh;
let nc: NatsConnection;
let ledger: Ledger;
beforeAll(async () => {
  // `held`: a slow worker whose bridge holds a blocking send's create a minute (BRIDGE_WRITE_WAIT_MS),
  // so that it can be killed inside the hold.
  mesh = await startMesh({
    sessions: [{ name: 'demo' }, { name: 'held', env: { BRIDGE_WRITE_WAIT_MS: '60000', ECHO_DELAY_MS: '600000' } }],
  });
  nc = await connect({ servers: mesh.nats.url });
  ledger = await Ledger.open(nc);
});
afterAll(async () => {
  await nc?.close();
  await mesh?.stop();
});

const send = (id: string, configuration?: object) =>
  rpc(`${mesh.gatewayUrl}/a2a/demo`, 'SendMessage', {
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text: id }] },
    ...(configuration ? { configuration } : {}),
  });
/** What the task's last write carried: its kinds of events, in order. */
const lastWrite = async (id: string) => {
  const s = await ledger.get(ledger.key(mesh.machine, 'demo', id));
  return s?.entry.events.map((e) => ('task' in e ? 'task' : 'statusUpdate' in e ? e.statusUpdate.status.state : Object.keys(e)[0]));
};

it("stores a blocking send's task once, created, started and finished, when the worker is quick", async () => {
  const r = await send('blocking');
  expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  expect(await lastWrite('blocking')).toEqual(['task', 'TASK_STATE_WORKING', 'artifactUpdate', 'TASK_STATE_COMPLETED']);
});

it("stores a non-blocking send's task before it answers, and its result in a write of its own", async () => {
  const r = await send('immediate', { returnImmediately: true });
  expect(r.result.task.status.state).toBe('TASK_STATE_WORKING');
  expect(await lastWrite('immediate')).toBeDefined();
  await eventually(async () => (await lastWrite('immediate'))?.includes('TASK_STATE_COMPLETED'));
  expect(await lastWrite('immediate')).toEqual(['artifactUpdate', 'TASK_STATE_COMPLETED']);
});

it('queues, and answers, a blocking send whose bridge was killed while it held the create', async () => {
  const signals = await SignalField.open(nc);
  const key = ledger.key(mesh.machine, 'held', 'killed-inside');
  const answer = rpc(`${mesh.gatewayUrl}/a2a/held`, 'SendMessage', {
    message: { messageId: 'killed-inside', role: 'ROLE_USER', parts: [{ text: 'done anyway' }] },
  });
  // The session works on it (its presence says so) while the ledger has nothing of it yet.
  await eventually(async () => (await signals.get(mesh.machine, 'held'))?.task === 'held:killed-inside');
  expect(await ledger.get(key)).toBeNull();
  await mesh.bridges.get('held')!.kill();
  // Nothing seen within the delivery ack limit: the gateway queues it in the ledger, as for any
  // bridge that does not answer, and its bridge, back as a quick worker, runs it.
  const queued = await eventually(() => ledger.get(key));
  expect(queued.entry.task.status.state).toBe('TASK_STATE_SUBMITTED');
  await mesh.startBridge('held', 'echo', { BRIDGE_WRITE_WAIT_MS: '60000' });
  const r = await answer;
  expect([r.result.task.status.state, r.result.task.artifacts[0].parts[0].text]).toEqual(['TASK_STATE_COMPLETED', 'done anyway']);
  expect(mesh.gateway.output()).toMatch(/bridge not answering; task queued in the ledger/);
});
