/**
 * A new task whose sender waits for its end (a blocking SendMessage) is created with its next change
 * when the worker is quick: gateway, bridge and echo harness as separate processes, the ledger read by
 * the test's own connection. A send whose sender is told of the task at once is stored before the
 * answer (docs/reliability.md). And what a bridge answers a delivery it took quietly.
 */
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { Ledger, SignalField } from '@shrooms/ledger';
import { subjects } from '@shrooms/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SendMessageRequest, StreamResponse } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { eventually, rpc, startMesh, type Mesh } from '@shrooms/testing';

let mesh: Mesh;
let nc: NatsConnection;
let ledger: Ledger;
beforeAll(async () => {
  // `held` and `slow`: slow workers whose bridges would hold a blocking send's create a minute
  // (BRIDGE_WRITE_WAIT_MS), and hold it half the gateway's delivery ack limit (12 s here): long enough
  // to kill `held`'s bridge inside the hold.
  const slow = { BRIDGE_WRITE_WAIT_MS: '60000', ECHO_DELAY_MS: '600000' };
  mesh = await startMesh({
    sessions: [{ name: 'demo' }, { name: 'held', env: slow }, { name: 'slow', env: slow }],
    serviceEnv: { gateway: { LIMIT_DELIVERY_ACK_MS: '12000' } },
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

it('streams every event of a queued task whose start and result were written at once', async () => {
  // The session busy on a permission prompt, so the streamed task queues behind it.
  const busy = await rpc(`${mesh.gatewayUrl}/a2a/demo`, 'SendMessage', {
    message: { messageId: 'busy-first', role: 'ROLE_USER', parts: [{ text: 'permission: Bash' }] },
  });
  expect(busy.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  const demo = await new ClientFactory().createFromUrl(`${mesh.gatewayUrl}/a2a/demo/`);
  const request = SendMessageRequest.fromJSON({ message: { messageId: 'streamed', role: 'ROLE_USER', parts: [{ text: 'streamed' }] } });
  const stream = demo.sendMessageStream(request)[Symbol.asyncIterator]();
  // Each event as the protocol's JSON says it: its kind, and its state or text.
  const kind = (e: unknown): string => {
    const j = StreamResponse.toJSON(e as StreamResponse) as any;
    if (j.statusUpdate) return `statusUpdate ${j.statusUpdate.status.state}`;
    return j.artifactUpdate ? `artifactUpdate ${j.artifactUpdate.artifact.parts[0].text}` : Object.keys(j)[0]!;
  };
  const events = [kind((await stream.next()).value)];
  // The prompt answered: the session takes the queued task up and the echo finishes it at once.
  await rpc(`${mesh.gatewayUrl}/a2a/demo`, 'SendMessage', {
    message: { messageId: 'busy-allow', role: 'ROLE_USER', parts: [{ text: 'allow' }], taskId: busy.result.task.id },
  });
  for (let e = await stream.next(); !e.done; e = await stream.next()) events.push(kind(e.value));
  // Its start and result went to the ledger in one write (two versions at once) …
  expect(await lastWrite('streamed')).toEqual(['TASK_STATE_WORKING', 'artifactUpdate', 'TASK_STATE_COMPLETED']);
  // … and the stream passed on each of its events, not a closing snapshot alone.
  expect(events.map((e) => e.replace('TASK_STATE_', ''))).toEqual([
    'task',
    'statusUpdate WORKING',
    'artifactUpdate streamed',
    'statusUpdate COMPLETED',
  ]);
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
  const queued = await eventually(() => ledger.get(key), 30_000);
  expect(queued.entry.task.status.state).toBe('TASK_STATE_SUBMITTED');
  await mesh.startBridge('held', 'echo', { BRIDGE_WRITE_WAIT_MS: '60000' });
  const r = await answer;
  expect([r.result.task.status.state, r.result.task.artifacts[0].parts[0].text]).toEqual(['TASK_STATE_COMPLETED', 'done anyway']);
  expect(mesh.gateway.output()).toMatch(/bridge not answering; task queued in the ledger/);
});

it('writes a held create within half the time the gateway waits to see it, however long the bridge would hold it', async () => {
  const key = ledger.key(mesh.machine, 'slow', 'in-time');
  const answer = rpc(`${mesh.gatewayUrl}/a2a/slow`, 'SendMessage', {
    message: { messageId: 'in-time', role: 'ROLE_USER', parts: [{ text: 'slowly' }] },
  }).catch(() => undefined); // never answered: the worker takes ten minutes, the mesh stops first
  // The bridge's own write (the task at work, create and start in one), not the gateway's fallback.
  const first = await eventually(() => ledger.get(key), 30_000);
  expect(first.entry.task.status.state).toBe('TASK_STATE_WORKING');
  expect(first.entry.events.map((e) => ('task' in e ? 'task' : 'statusUpdate' in e ? e.statusUpdate.status.state : ''))).toEqual([
    'task',
    'TASK_STATE_WORKING',
  ]);
  const fallback = mesh.gateway
    .output()
    .split('\n')
    .filter((l) => l.includes('bridge not answering') && l.includes('in-time'));
  expect(fallback).toEqual([]);
  void answer;
});

it('answers a delivery it took quietly with a later "taken" only for a sender that passes it over; an older one is sent nothing', async () => {
  const deliver = (id: string, takenLater: boolean) =>
    nc.request(
      subjects.bridge(mesh.machine, 'demo', 'deliver'),
      JSON.stringify({
        machine: mesh.machine,
        session: 'demo',
        message: { messageId: id, role: 'ROLE_USER', parts: [{ text: id }] },
        origin: { device: mesh.machine },
        metadata: {},
        quiet: true,
        ...(takenLater ? { takenLater: true } : {}),
      }),
      { timeout: 3000 },
    );
  expect((await deliver('quiet-now', true)).json()).toEqual({ ok: true, taken: true });
  await expect(deliver('quiet-before', false)).rejects.toThrow();
  // Both taken, and stored: the gateway learns of them from its ledger watch.
  for (const id of ['quiet-now', 'quiet-before'])
    await eventually(async () => (await ledger.get(ledger.key(mesh.machine, 'demo', id))) !== null);
});
