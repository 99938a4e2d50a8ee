/**
 * The guard as it runs: two guard processes (a queue group sharing JetStream KV state) on a real
 * nats-server, asked through the client the gateway uses (spec §6).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/nats-core';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { askGuard, guardControl, guardRefusal, type GuardAdmitInput } from '@shrooms/client';
import { SignalField } from '@shrooms/ledger';
import { BUCKETS, RefusalEventSchema, SERVICE_NAMES, keys, subjects, type GuardControlRequest } from '@shrooms/protocol';
import { runTs, startNatsServer, tempDir, type NatsServerHandle, type ServiceProcess, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: NatsServerHandle;
let dir: TempDir | undefined;
let nc: NatsConnection;
const guards: ServiceProcess[] = [];

// Bounds, not timings: generous so a loaded machine cannot turn a slow answer into a refusal.
const ASK = { timeoutMs: 20_000 };

function ask(req: Partial<GuardAdmitInput> & { taskId: string }) {
  return askGuard(nc, { machine: 'homeserver', session: 'review', origin: { device: 'laptop.home' }, ...req }, ASK);
}

function control(body: GuardControlRequest) {
  return guardControl(nc, body, ASK.timeoutMs);
}

beforeAll(async () => {
  server = await startNatsServer();
  dir = await tempDir('shrooms-guard-e2e');
  const policy = join(dir.path, 'policy.yaml');
  await writeFile(
    policy,
    ['sessions:', '  "homeserver/private":', '    devices: [laptop.home]', '  "pi5/trusted":', '    agentTasks: true', ''].join('\n'),
  );
  const env = {
    NATS_URL: server.url,
    SHROOMS_MACHINE: 'guardhost',
    GUARD_POLICY_FILE: policy,
    GUARD_CAS_DEADLINE_MS: '15000',
    GUARD_BUDGET_MAX: '1000',
    LOG_LEVEL: 'info',
  };
  for (let i = 0; i < 2; i++) guards.push(runTs('services/guard/src/main.ts', [], env));
  await Promise.all(guards.map((g) => g.waitFor(/guard ready/, 60_000)));
  nc = await connect({ servers: server.url });
});

afterAll(async () => {
  try {
    await nc?.close();
    for (const g of guards) await g.kill();
    await server?.stop();
  } finally {
    await dir?.remove();
  }
});

describe('the loop guard across two guard replicas', () => {
  const ids = Array.from({ length: 100 }, (_, i) => `review:burst-${i}`);
  let admitted: string[] = [];

  it('admits exactly 30 of 100 concurrent new tasks from one device to one session', async () => {
    const refusals: string[] = [];
    const sub = nc.subscribe(subjects.refusal('homeserver', 'review'), {
      callback: (_e, m) => void refusals.push(RefusalEventSchema.parse(m.json()).taskId),
    });
    await nc.flush();

    const decisions = await Promise.all(ids.map((taskId) => ask({ taskId })));
    admitted = ids.filter((_, i) => decisions[i]!.admit);
    expect(admitted).toHaveLength(30);

    const refused = decisions.filter((d) => !d.admit).map((d) => guardRefusal(d)!);
    expect(refused).toHaveLength(70);
    for (const err of refused) {
      expect(err.key).toBe('LOOP_GUARD');
      expect(err.spec.code).toBe(-32050);
      expect(Number(err.details.retryAfterSeconds)).toBeGreaterThan(0);
      expect(Number(err.details.retryAfterSeconds)).toBeLessThanOrEqual(3600);
    }
    expect((await control({ action: 'counters.get', device: 'laptop.home', machine: 'homeserver', session: 'review' })).count).toBe(30);

    // Both replicas took part, and every refusal reached the dashboard's subject.
    const stats = [];
    for await (const m of await nc.requestMany(`$SRV.STATS.${SERVICE_NAMES.guard}`, '', {
      strategy: 'count',
      maxMessages: 2,
      maxWait: 10_000,
    })) {
      stats.push(m.json<{ endpoints: Array<{ name: string; num_requests: number }> }>());
    }
    expect(stats.map((s) => s.endpoints.find((e) => e.name === 'admit')!.num_requests > 0)).toEqual([true, true]);
    await nc.flush();
    sub.unsubscribe();
    expect(refusals.filter((id) => id.startsWith('review:burst-')).sort()).toEqual(ids.filter((id) => !admitted.includes(id)).sort());
  });

  it('does not count repeated admits of the same tasks', async () => {
    const again = await Promise.all([...admitted, ...admitted].map((taskId) => ask({ taskId })));
    expect(again.every((d) => d.admit)).toBe(true);
    expect(guardRefusal(await ask({ taskId: 'review:one-more' }))?.key).toBe('LOOP_GUARD');
    expect((await control({ action: 'counters.get', device: 'laptop.home', machine: 'homeserver', session: 'review' })).count).toBe(30);
  });

  it('admits exactly 30 of a stream of new tasks, one after another, with places reserved ahead by both replicas', async () => {
    const window = await new Kvm(nc).open(BUCKETS.guard);
    const key = keys.rate('laptop.home', 'homeserver', 'stream');
    const decisions = [];
    let placesSeen = false;
    for (let i = 0; i < 40; i++) {
      decisions.push(await ask({ session: 'stream', taskId: `stream:${i}` }));
      const stored = (await window.get(key))?.string() ?? '';
      placesSeen ||= stored.includes('"~place:');
    }
    expect(placesSeen).toBe(true);
    expect(decisions.filter((d) => d.admit)).toHaveLength(30);
    expect(decisions.slice(30).every((d) => guardRefusal(d)?.key === 'LOOP_GUARD')).toBe(true);
    const state = await control({ action: 'counters.get', device: 'laptop.home', machine: 'homeserver', session: 'stream' });
    // Every place was given or given back once the window was full: 30 tasks, each named.
    expect(state).toMatchObject({ count: 30, reserved: 0 });
    expect((state.ids as string[]).sort()).toEqual(decisions.flatMap((d, i) => (d.admit ? [`stream:${i}`] : [])).sort());
  });

  it('counts another device, and another session, separately', async () => {
    expect((await ask({ taskId: 'review:from-pi5', origin: { device: 'pi5.home' } })).admit).toBe(true);
    expect((await ask({ taskId: 'build:1', session: 'build' })).admit).toBe(true);
  });
});

describe('the chain', () => {
  const agent = (device: string, from: string) => ({ device, from });

  it('refuses A→B→C→A at the fourth hop with the cycle code', async () => {
    expect((await ask({ machine: 'laptop', session: 'a', taskId: 'a:1' })).admit).toBe(true);
    expect(
      (
        await ask({
          machine: 'laptop',
          session: 'b',
          taskId: 'b:1',
          chain: ['laptop/a'],
          depth: 1,
          fromAgent: true,
          origin: agent('laptop', 'laptop/a'),
        })
      ).admit,
    ).toBe(true);
    expect(
      (
        await ask({
          machine: 'laptop',
          session: 'c',
          taskId: 'c:1',
          chain: ['laptop/a', 'laptop/b'],
          depth: 2,
          fromAgent: true,
          origin: agent('laptop', 'laptop/b'),
        })
      ).admit,
    ).toBe(true);
    const fourth = await ask({
      machine: 'laptop',
      session: 'a',
      taskId: 'a:2',
      chain: ['laptop/a', 'laptop/b', 'laptop/c'],
      depth: 3,
      fromAgent: true,
      origin: agent('laptop', 'laptop/c'),
    });
    expect(guardRefusal(fourth)?.key).toBe('CHAIN_CYCLE');
    expect(guardRefusal(fourth)?.spec.code).toBe(-32052);
  });

  it('admits a chain of depth 3 and refuses depth 4 with the depth code', async () => {
    const chain = ['laptop/a', 'laptop/b', 'laptop/c'];
    expect(
      (await ask({ machine: 'laptop', session: 'd', taskId: 'd:1', chain, depth: 3, fromAgent: true, origin: agent('laptop', 'laptop/c') }))
        .admit,
    ).toBe(true);
    const deep = await ask({
      machine: 'laptop',
      session: 'e',
      taskId: 'e:1',
      chain: [...chain, 'laptop/d'],
      depth: 4,
      fromAgent: true,
      origin: agent('laptop', 'laptop/d'),
    });
    expect(guardRefusal(deep)?.key).toBe('CHAIN_TOO_DEEP');
    expect(guardRefusal(deep)?.spec.code).toBe(-32051);
  });
});

describe('allow-lists and the sharp edge', () => {
  it("refuses a device the session's allow-list does not name", async () => {
    expect(guardRefusal(await ask({ session: 'private', taskId: 'private:1', origin: { device: 'pi5.home' } }))?.key).toBe('NOT_ALLOWED');
    expect((await ask({ session: 'private', taskId: 'private:2', origin: { device: 'laptop.home' } })).admit).toBe(true);
  });

  it("holds an agent's task for a session that runs tools without asking", async () => {
    const field = await SignalField.open(nc);
    const signal = { state: 'idle' as const, openTasks: 0, queuedTasks: 0, remindersStopped: false };
    await field.renew({ machine: 'pi5', session: 'jimmy', harness: 'pi', autoApprove: true, ...signal });
    await field.renew({ machine: 'pi5', session: 'trusted', harness: 'pi', autoApprove: true, ...signal });
    await field.renew({ machine: 'homeserver', session: 'careful', harness: 'claude', autoApprove: false, ...signal });
    await field.renew({ machine: 'homeserver', session: 'yolo', harness: 'claude', autoApprove: true, ...signal });
    const fromAgent = { fromAgent: true, origin: { device: 'laptop.home', from: 'laptop/webapp' } };

    expect(await ask({ machine: 'pi5', session: 'jimmy', taskId: 'jimmy:1', ...fromAgent })).toEqual({ admit: true, hold: true });
    expect(await ask({ machine: 'homeserver', session: 'yolo', taskId: 'yolo:1', ...fromAgent })).toEqual({ admit: true, hold: true });
    expect(await ask({ machine: 'homeserver', session: 'careful', taskId: 'careful:1', ...fromAgent })).toEqual({
      admit: true,
      hold: false,
    });
    expect(await ask({ machine: 'pi5', session: 'trusted', taskId: 'trusted:1', ...fromAgent })).toEqual({ admit: true, hold: false });
    expect(await ask({ machine: 'pi5', session: 'jimmy', taskId: 'jimmy:2', origin: { device: 'laptop.home' } })).toEqual({
      admit: true,
      hold: false,
    });
  });
});

describe('failing closed', () => {
  it('refuses with GUARD_UNAVAILABLE when the guard does not answer in time', async () => {
    // One replica gone, the other frozen: it is still subscribed but answers nothing.
    expect(await guards[1]!.stop()).toBe(0);
    guards[0]!.child.kill('SIGSTOP');
    try {
      const d = await askGuard(
        nc,
        { machine: 'homeserver', session: 'review', taskId: 'review:frozen', origin: { device: 'x.home' } },
        { timeoutMs: 500 },
      );
      expect(d.admit).toBe(false);
      expect(guardRefusal(d)?.key).toBe('GUARD_UNAVAILABLE');
    } finally {
      guards[0]!.child.kill('SIGCONT');
    }
  });

  it('refuses with GUARD_UNAVAILABLE when no guard runs', async () => {
    expect(await guards[0]!.stop()).toBe(0);
    const d = await askGuard(
      nc,
      { machine: 'homeserver', session: 'review', taskId: 'review:alone', origin: { device: 'x.home' } },
      { timeoutMs: 2000 },
    );
    expect(d.admit).toBe(false);
    expect(guardRefusal(d)?.key).toBe('GUARD_UNAVAILABLE');
  });
});
