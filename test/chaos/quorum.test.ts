/**
 * A mesh started on a 3-node cluster that has no quorum yet (two of its nodes still down, as after
 * a power cut when one machine boots first): every service that creates its R3 buckets at start —
 * the gateway (ledger, signal field), the guard (windows, policy), the scheduler (schedules) — waits
 * for JetStream instead of exiting, and the whole mesh serves once the other nodes are back. Each
 * service is asked to prove it: an ask is finished through the guard, a schedule is listed. Then
 * the whole cluster is killed and restarted under the running mesh: it serves again, and a task
 * finished before is still there.
 */
import { connect } from '@nats-io/transport-node';
import { scheduleClient } from '@shrooms/client';
import { eventually, rpc, sendAsk, startMesh, startNatsCluster, type Mesh, type NatsCluster } from '@shrooms/testing';
import { afterAll, expect, it } from 'vitest';
import { probeUntilCompleted } from './support/faults.js';

/** How long the two nodes stay down after the services start (inside the services' retry window). */
const DOWN_MS = 2_000;

let cluster: NatsCluster | undefined;
let mesh: Mesh | undefined;

afterAll(async () => {
  await mesh?.stop();
  await cluster?.stop();
});

it('comes up on a cluster that gets its quorum only after the services started', async () => {
  cluster = await startNatsCluster();
  const [, n2, n3] = cluster.nodes;
  await Promise.all([n2!.kill(), n3!.kill()]);

  // The services connect and ask JetStream while it has no meta leader; then the quorum comes back.
  const quorumBack = async () => {
    await new Promise((r) => setTimeout(r, DOWN_MS));
    expect(n2!.running || n3!.running).toBe(false);
    await Promise.all([n2!.restart(), n3!.restart()]);
  };
  [mesh] = await Promise.all([
    startMesh({
      nats: cluster.handle,
      guard: true,
      scheduler: true,
      sessions: [{ name: 'alpha' }],
      env: { SHROOMS_REPLICAS: '3' },
    }),
    quorumBack(),
  ]);

  await servesAgain('quorum');
}, 180_000);

it('serves again, its tasks kept, after the whole cluster was killed and restarted', async () => {
  const before = await sendAsk(mesh!.gatewayUrl, 'alpha', 'whole-1', 'before', { blocking: true });
  expect(before.task?.status.state).toBe('TASK_STATE_COMPLETED');

  await Promise.all(cluster!.nodes.map((n) => n.kill()));
  await new Promise((r) => setTimeout(r, DOWN_MS));
  await Promise.all(cluster!.nodes.map((n) => n.restart()));

  await servesAgain('whole');
  const kept = await rpc(`${mesh!.gatewayUrl}/a2a/alpha`, 'GetTask', { id: before.task!.id });
  expect(kept.result?.status?.state, JSON.stringify(kept)).toBe('TASK_STATE_COMPLETED');
}, 180_000);

/** Every service still running, an ask finished end to end, the scheduler answering. */
async function servesAgain(tag: string): Promise<void> {
  // None of them exited on the way (a service that gave up on JetStream exits 1).
  for (const s of mesh!.services) expect(s.child.exitCode, s.output().slice(-2000)).toBeNull();
  // Throws, naming the last answer, when no ask completes within the bound: that is the check.
  await probeUntilCompleted(mesh!.gatewayUrl, 'alpha', `${tag}-probe`, 60_000);
  const answer = await sendAsk(mesh!.gatewayUrl, 'alpha', `${tag}-ask`, 'hello', { blocking: true });
  expect(answer.task?.status.state).toBe('TASK_STATE_COMPLETED');

  const nc = await connect({ servers: cluster!.nodes.map((n) => n.url) });
  try {
    const schedules = scheduleClient(nc, { timeoutMs: 2_000 });
    await eventually(async () => Array.isArray((await schedules.list({})).schedules), 30_000, 200);
  } finally {
    await nc.close();
  }
}
