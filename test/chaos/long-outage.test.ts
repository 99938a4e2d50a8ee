/**
 * NATS away while a worker finishes its task: the
 * worker's result is kept by its bridge and written when NATS is back, and the session takes new
 * tasks at once — before, the task stayed WORKING until its deadline (a day by default) and the
 * session took nothing else. Single nats-server, killed and started again on the same data; the
 * bridge and the gateway are separate processes that live through it.
 */
import { META, isTerminal } from '@shrooms/protocol';
import { eventually, rpc, sendAsk, startMesh, startNatsServer, type Mesh, type NatsServerHandle } from '@shrooms/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

/** The echo worker takes this long per task: NATS goes away while it works. */
const WORK_MS = 3_000;

let nats: NatsServerHandle;
let mesh: Mesh;

beforeAll(async () => {
  nats = await startNatsServer();
  mesh = await startMesh({ nats, sessions: [{ name: 'alpha' }], env: { ECHO_DELAY_MS: String(WORK_MS) } });
}, 120_000);

afterAll(async () => {
  await mesh?.stop();
  await nats?.stop();
});

const task = async (id: string) => (await rpc(`${mesh.gatewayUrl}/a2a/alpha`, 'GetTask', { id: `alpha:${id}` })).result;

/** The task once it is finished (asked again while the gateway cannot answer yet). */
const finished = (id: string) =>
  eventually(async () => {
    const t = await task(id).catch(() => undefined);
    return t && isTerminal(t.status.state) ? t : undefined;
  }, 60_000);

it("writes a worker's result kept through a long NATS outage, and the session goes on", async () => {
  const bridge = mesh.bridges.get('alpha')!;
  const asked = await sendAsk(mesh.gatewayUrl, 'alpha', 'long-outage-1', 'finished while NATS is away');
  expect(asked.task?.status.state).toBe('TASK_STATE_WORKING');
  nats.kill();
  // The worker finishes 3 s later. The bridge's NATS link says NATS is gone, so its ledger refuses
  // the write at once and the bridge keeps the result — not after the minute a write against an
  // absent server would keep trying (WRITE_DEADLINE_MS; this wait is well under it).
  await bridge.waitFor(/the ledger did not take the worker's update; it is kept/, 30_000);
  await nats.restart();
  await bridge.waitFor(/the worker's kept update reached the ledger/, 60_000);
  const done = await finished('long-outage-1');
  expect(done.status.state).toBe('TASK_STATE_COMPLETED');
  expect(JSON.stringify(done.artifacts)).toContain('finished while NATS is away');
  // The session is not held by it: a new task is taken and finished.
  const next = await sendAsk(mesh.gatewayUrl, 'alpha', 'long-outage-2', 'after the outage', { blocking: true, timeoutMs: 60_000 });
  expect(next.task?.status.state).toBe('TASK_STATE_COMPLETED');
  expect(bridge.child.exitCode).toBeNull();
}, 300_000);

it('writes a result kept through an outage after its bridge was killed, without doing the task again', async () => {
  const bridge = mesh.bridges.get('alpha')!;
  const asked = await sendAsk(mesh.gatewayUrl, 'alpha', 'long-outage-3', 'finished before the bridge was killed');
  expect(asked.task?.status.state).toBe('TASK_STATE_WORKING');
  nats.kill();
  // This task's line (the first test's is in the same output).
  await bridge.waitFor(/alpha:long-outage-3[^\n]*it is kept|it is kept[^\n]*alpha:long-outage-3/, 30_000);
  // Killed with the result kept (in its outbox file too); NATS back; the bridge started again.
  await bridge.kill();
  await nats.restart();
  const again = await mesh.startBridge('alpha');
  await again.waitFor(/the worker's kept update reached the ledger/, 60_000);
  const done = await finished('long-outage-3');
  expect(done.status.state).toBe('TASK_STATE_COMPLETED');
  expect(JSON.stringify(done.artifacts)).toContain('finished before the bridge was killed');
  // Written from the outbox, not delivered again and done a second time.
  expect(done.metadata?.[META.redeliveries]).toBeUndefined();
  expect(again.output()).toMatch(/writing the worker's updates kept before this start/);
  expect(again.output()).not.toMatch(/delivering a task again after a restart/);
}, 300_000);
