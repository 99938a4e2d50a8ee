/** The ledger's bucket's limits (bucket.ts), on a real nats-server of each test's own. */
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { BUCKETS, DEFAULT_LIMITS } from '@shrooms/protocol';
import { eventually, startNatsWithConnection } from '@shrooms/testing';
import { expect, it } from 'vitest';
import { Ledger } from './ledger.js';
import { asked } from './testing/asked.js';

it("makes the owner's retention the bucket's max age, which every opener reads and by which the ledger drops a task", async () => {
  const server = await startNatsWithConnection();
  const peer = await connect({ servers: server.url });
  try {
    const jsm = await jetstreamManager(server.nc);
    const maxAgeMs = async () => (await jsm.streams.info(`KV_${BUCKETS.tasks}`)).config.max_age / 1_000_000;
    const DAY = 86_400_000;
    // Made first by another process, with the default (a week) …
    await Ledger.open(peer);
    expect(await maxAgeMs()).toBe(DEFAULT_LIMITS.finishedRetentionMs);
    // … the gateway's setting is what it keeps, whatever another opener is started with.
    const gateway = await Ledger.open(server.nc, { limits: { finishedRetentionMs: 3 * DAY }, owner: true });
    expect([await maxAgeMs(), gateway.retentionMs, gateway.limitsLeft]).toEqual([3 * DAY, 3 * DAY, false]);
    const other = await Ledger.open(peer, { limits: { finishedRetentionMs: 9 * DAY } });
    expect([await maxAgeMs(), other.retentionMs]).toEqual([3 * DAY, 3 * DAY]);
    // A short one, to see the bucket drop a task by it.
    await Ledger.open(server.nc, { limits: { finishedRetentionMs: 1500 }, owner: true });
    // Read again, by an opener that found another's (a gateway started earlier on another machine).
    expect([gateway.retentionMs, await gateway.readRetention(), gateway.retentionMs]).toEqual([3 * DAY, 1500, 1500]);
    const key = other.key('box', 's', 'short-lived');
    expect(await other.create(key, asked('short-lived'))).not.toBeNull();
    expect(await eventually(async () => (await other.get(key)) === null, 15_000)).toBe(true);
  } finally {
    await peer.close();
    await server.stop();
  }
});

it('reads a bucket made with no max age as keeping tasks forever, not as a retention of 0', async () => {
  const server = await startNatsWithConnection();
  try {
    // Made by hand without a max age: what follows the ledger must then let nothing go.
    const jsm = await jetstreamManager(server.nc);
    await jsm.streams.add({
      name: `KV_${BUCKETS.tasks}`,
      subjects: [`$KV.${BUCKETS.tasks}.>`],
      max_msgs_per_subject: 1,
      allow_direct: true,
    });
    expect((await Ledger.open(server.nc)).retentionMs).toBe(Infinity);
  } finally {
    await server.stop();
  }
});
