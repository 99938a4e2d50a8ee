/**
 * The test helper's testcontainers path for real: with a Docker engine and NATS_USE_DOCKER=1,
 * startNatsServer() runs nats-server in a container (the NATS image built from Debian's
 * nats-server, found locally, never pulled), and the ledger works against it.
 */
import { connect } from '@nats-io/transport-node';
import { Ledger, transitions } from '@shrooms/ledger';
import { run, DOCKER_BIN, startNatsServer, type NatsServerHandle } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const docker = inject('docker');

describe.skipIf(!docker)('testcontainers (NATS_USE_DOCKER=1)', () => {
  let nats: NatsServerHandle | undefined;
  const saved = { ...process.env };
  beforeAll(async () => {
    Object.assign(process.env, docker!.env, { NATS_USE_DOCKER: '1', NATS_IMAGE: docker!.natsImage });
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.stop();
    process.env = saved;
  });

  it('starts nats-server in a container from the local NATS image', async () => {
    expect(nats!.kind).toBe('docker');
    const ps = await run(DOCKER_BIN, ['-H', docker!.host, 'ps', '--format', '{{.Image}} {{.Ports}}']);
    expect(ps).toContain(docker!.natsImage);
    const health = await fetch(`${nats!.monitorUrl}/healthz?js-enabled-only=true`);
    expect(health.status).toBe(200);
  });

  it('stores a task in the ledger there and reads it back from another connection', async () => {
    const writer = await connect({ servers: nats!.url });
    const reader = await connect({ servers: nats!.url });
    try {
      const ledger = await Ledger.open(writer);
      const key = ledger.key('box', 'demo', 'in-a-container');
      await ledger.create(
        key,
        transitions.newTask({
          id: 'demo:in-a-container',
          contextId: 'c',
          message: { messageId: 'in-a-container', role: 'ROLE_USER', parts: [{ text: 'hello' }] },
          metadata: {},
          queued: false,
          now: new Date(),
        }),
      );
      await ledger.transition(key, (e) => transitions.start(e, new Date()));
      await ledger.transition(key, (e) => transitions.complete(e, 'hello', new Date()));
      const read = await (await Ledger.open(reader)).get(key);
      expect(read!.entry.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(read!.entry.v).toBe(3);
    } finally {
      await writer.close();
      await reader.close();
    }
  });
});
