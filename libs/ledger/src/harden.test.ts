import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { BUCKETS } from '@shrooms/protocol';
import { startNatsCluster, startNatsServer, type NatsCluster } from '@shrooms/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Ledger } from './ledger.js';
import { SignalField } from './signals.js';
import { hardenBucket } from './harden.js';

let cluster: NatsCluster;
beforeAll(async () => {
  cluster = await startNatsCluster({ name: 'harden', timeoutMs: 20_000 });
});
afterAll(async () => {
  await cluster?.stop();
});

it('creates the ledger and the signal field with no rollups and no purges, and a restarted cluster node comes back', async () => {
  const nc = await connect({ servers: cluster.url });
  try {
    await Ledger.open(nc, { replicas: 3, owner: true });
    await SignalField.open(nc, { replicas: 3 });
    const jsm = await jetstreamManager(nc);
    for (const bucket of [BUCKETS.tasks, BUCKETS.signals]) {
      const { config } = await jsm.streams.info(`KV_${bucket}`);
      expect({ bucket, rollups: config.allow_rollup_hdrs, denyPurge: config.deny_purge }).toEqual({
        bucket,
        rollups: false,
        denyPurge: true,
      });
    }
    // Hardened by an update instead, nats-server 2.9 fails to replay the stream on this restart
    // ("can not cancel deny purge") and the node crashes on every start.
    const node = cluster.node('n2');
    await node.kill();
    await node.restart();
    expect(node.running).toBe(true);
    // Opening again (every gateway start) changes nothing.
    await Ledger.open(nc, { replicas: 3, owner: true });
    expect((await jsm.streams.info(`KV_${BUCKETS.tasks}`)).config.deny_purge).toBe(true);
  } finally {
    await nc.close();
  }
});

it('leaves a replicated bucket an older version made soft as it is on nats-server 2.9, so its nodes still restart', async () => {
  const nc = await connect({ servers: cluster.url });
  try {
    const { Kvm } = await import('@nats-io/kv');
    await new Kvm(nc).create('shrooms_soft', { history: 1, replicas: 3 });
    const state = await hardenBucket(nc, 'shrooms_soft');
    const jsm = await jetstreamManager(nc);
    const { config } = await jsm.streams.info('KV_shrooms_soft');
    if (/^2\.9\./.test(nc.info?.version ?? '')) {
      expect(state).toBe('left soft: replicated on nats-server 2.9');
      expect(config.allow_rollup_hdrs).toBe(true);
    } else expect(state).toBe('hardened');
    const node = cluster.node('n3');
    await node.kill();
    await node.restart();
    expect(node.running).toBe(true);
  } finally {
    await nc.close();
  }
});

it('opens with several gateways making the ledger and the signal field at once on fresh servers', async () => {
  // The creators race: the loser of a create is answered 10058 (name in use) or 10065 (subjects
  // overlap) by nats-server 2.9 and must open what the winner made, not fail its start.
  for (let round = 0; round < 30; round++) {
    const server = await startNatsServer();
    const conns = await Promise.all(Array.from({ length: 6 }, () => connect({ servers: server.url })));
    try {
      const opened = await Promise.allSettled(
        conns.map(async (nc) => {
          await Ledger.open(nc, { owner: true });
          await SignalField.open(nc);
        }),
      );
      expect(opened.map((o) => (o.status === 'rejected' ? String(o.reason) : 'opened'))).toEqual(Array(6).fill('opened'));
      const { config } = await (await jetstreamManager(conns[0]!)).streams.info(`KV_${BUCKETS.tasks}`);
      expect(config.deny_purge).toBe(true);
    } finally {
      for (const nc of conns) await nc.close();
      await server.stop();
    }
  }
});
