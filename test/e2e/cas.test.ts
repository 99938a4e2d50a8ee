/**
 * Compare-and-set on a replicated (R3) KV bucket of a real 3-node nats-server cluster, and on one
 * node: of N writers on one revision exactly one wins (libs/runtime cas.ts). The last test shows
 * why the primitive exists: `kv.update` on one revision lets several writers through on 2.9's R3.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { casCreate, casPurge, casUpdate } from '@shrooms/runtime';
import { startNatsCluster, startNatsServer, type NatsCluster, type NatsServerHandle } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const WRITERS = 20;
const TRIALS = 30;
const enc = new TextEncoder();

/** Winners among WRITERS concurrent calls of `write(i)`, each resolving to a revision or null. */
async function winners(write: (i: number) => Promise<number | null>): Promise<number> {
  const out = await Promise.allSettled(Array.from({ length: WRITERS }, (_, i) => write(i)));
  return out.filter((r) => r.status === 'fulfilled' && r.value !== null).length;
}

/** One KV handle per connection (each connection to another node), writers spread over them. */
function suite(name: string, start: () => Promise<{ urls: string[]; replicas: number; stop(): Promise<void> }>) {
  describe(name, () => {
    let stop: () => Promise<void>;
    let ncs: NatsConnection[] = [];
    let kvs: KV[] = [];
    let replicas = 1;

    beforeAll(async () => {
      const s = await start();
      stop = s.stop;
      replicas = s.replicas;
      ncs = await Promise.all(s.urls.map((servers) => connect({ servers })));
      kvs = [await new Kvm(ncs[0]!).create('cas_test', { replicas, history: 1 })];
      for (const nc of ncs.slice(1)) kvs.push(await new Kvm(nc).open('cas_test'));
    });
    afterAll(async () => {
      await Promise.all(ncs.map((nc) => nc.close()));
      await stop?.();
    });
    const kv = (i: number) => kvs[i % kvs.length]!;

    it(`lets exactly one of ${WRITERS} concurrent updates on one revision through, ${TRIALS} times in a row`, async () => {
      const counts: number[] = [];
      for (let t = 0; t < TRIALS; t++) {
        const rev = await kv(0).put(`u${t}`, 'start');
        counts.push(await winners((i) => casUpdate(kv(i), `u${t}`, enc.encode(`w${i}`), rev)));
      }
      expect(counts).toEqual(Array(TRIALS).fill(1));
    });

    it(`creates a deleted key for exactly one of ${WRITERS} concurrent writers, ${TRIALS} times in a row`, async () => {
      const counts: number[] = [];
      for (let t = 0; t < TRIALS; t++) {
        await kv(0).put(`d${t}`, 'old');
        await kv(0).delete(`d${t}`);
        counts.push(await winners((i) => casCreate(kv(i), `d${t}`, enc.encode(`w${i}`))));
      }
      expect(counts).toEqual(Array(TRIALS).fill(1));
    });

    it(`lets exactly one of a purge and ${WRITERS - 1} updates on one revision through, ${TRIALS} times in a row`, async () => {
      const counts: number[] = [];
      const purged: boolean[] = [];
      const jsm = await jetstreamManager(ncs[0]!);
      for (let t = 0; t < TRIALS; t++) {
        const rev = await kv(0).put(`p${t}`, 'finished');
        counts.push(
          await winners(async (i) => {
            if (i !== t % WRITERS) return casUpdate(kv(i), `p${t}`, enc.encode(`w${i}`), rev);
            const ok = await casPurge(kv(i), `p${t}`, rev);
            purged[t] = ok;
            return ok ? 1 : null;
          }),
        );
        // What the bucket holds agrees with who won: the purge marker, or the one update. Read from
        // the stream leader (STREAM.MSG.GET): a direct get may be answered by a replica that lags.
        const m = await jsm.streams.getMessage('KV_cas_test', { last_by_subj: `$KV.cas_test.p${t}` });
        expect({ t, op: m?.header?.get('KV-Operation') || 'PUT' }).toEqual({ t, op: purged[t] ? 'PURGE' : 'PUT' });
      }
      expect(counts).toEqual(Array(TRIALS).fill(1));
    });

    it(`loses no increment of a counter that ${WRITERS} writers raise 5 times each by read and compare-and-set`, async () => {
      await kv(0).put('counter', '0');
      const written: number[] = [];
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, i) => {
          for (let done = 0; done < 5;) {
            // A replica may answer a direct get a few messages behind: the write then fails and is retried.
            const e = await kv(i).get('counter');
            if (!e) continue;
            const next = Number(e.string()) + 1;
            if ((await casUpdate(kv(i), 'counter', enc.encode(String(next)), e.revision)) !== null) {
              written.push(next);
              done++;
            }
          }
        }),
      );
      // Every value 1..100 written exactly once: no two writers raised the counter from the same value.
      expect(written.sort((a, b) => a - b)).toEqual(Array.from({ length: WRITERS * 5 }, (_, i) => i + 1));
    });

    it(`kv.update on one revision lets more than one writer through on a replicated stream of nats-server 2.9`, async (ctx) => {
      if (replicas === 1 || !/^2\.9\./.test(ncs[0]!.info?.version ?? '')) ctx.skip();
      let most = 0;
      for (let t = 0; t < TRIALS && most <= 1; t++) {
        const rev = await kv(0).put(`k${t}`, 'start');
        most = Math.max(most, await winners((i) => kv(i).update(`k${t}`, `w${i}`, rev)));
      }
      // If this fails, the server checks the revision exactly: cas.ts's message id is no longer needed.
      expect(most).toBeGreaterThan(1);
    });
  });
}

suite('an R3 bucket on a 3-node cluster', async () => {
  const cluster: NatsCluster = await startNatsCluster({ name: 'cas' });
  return { urls: cluster.nodes.map((n) => n.url), replicas: 3, stop: () => cluster.stop() };
});

suite('a bucket on one node', async () => {
  const server: NatsServerHandle = await startNatsServer();
  return { urls: [server.url], replicas: 1, stop: () => server.stop() };
});
