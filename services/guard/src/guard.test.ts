import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/nats-core';
import { subjects, type Signal } from '@shrooms/protocol';
import { connectNats, createLogger } from '@shrooms/runtime';
import { eventually, startNatsServer, tempDir, type NatsServerHandle, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askGuard, guardControl, guardRefusal } from '@shrooms/client';
import { loadGuardConfig } from './config.js';
import { buildGuard, type Guard } from './guard.js';
import { RefusalEventSchema } from '@shrooms/protocol';

const log = createLogger('guard-test', 'silent');
let seq = 0;
const taskId = () => `t:${++seq}`;

describe('buildGuard (two replicas in one process)', () => {
  let server: NatsServerHandle;
  let dir: TempDir | undefined;
  let policyFile: string;
  const conns: NatsConnection[] = [];
  const guards: Guard[] = [];
  let client: NatsConnection;
  const signals = new Map<string, Pick<Signal, 'autoApprove' | 'harness'>>();

  beforeAll(async () => {
    server = await startNatsServer();
    dir = await tempDir('guard-unit');
    policyFile = join(dir.path, 'policy.yaml');
    await writeFile(
      policyFile,
      ['sessions:', '  "homeserver/private":', '    devices: [laptop.home]', '  "pi5/open":', '    agentTasks: true', ''].join('\n'),
    );
    const config = loadGuardConfig({
      NATS_URL: server.url,
      GUARD_RATE_MAX: '3',
      GUARD_BUDGET_MAX: '4',
      GUARD_MAX_DEPTH: '3',
      GUARD_POLICY_FILE: policyFile,
      GUARD_POLICY_DEBOUNCE_MS: '10',
    });
    for (let i = 0; i < 2; i++) {
      const nc = await connectNats({ NATS_URL: server.url }, log, 'guard-test');
      conns.push(nc);
      guards.push(
        await buildGuard({ nc, log, config, readSignal: async (m, s) => (signals.get(`${m}/${s}`) as Signal | undefined) ?? null }),
      );
    }
    client = await connectNats({ NATS_URL: server.url }, log, 'guard-test');
  });
  afterAll(async () => {
    try {
      for (const g of guards) await g.stop();
      for (const nc of [...conns, client]) await nc.close();
      await server.stop();
    } finally {
      await dir?.remove();
    }
  });

  const ask = (over: Record<string, unknown> = {}) =>
    askGuard(
      client,
      { machine: 'homeserver', session: 'review', taskId: taskId(), origin: { device: 'laptop.home' }, ...over },
      { timeoutMs: 5000 },
    );

  it('registers admit and control with the services API', () => {
    const info = guards[0]!.service.info();
    expect(info.name).toBe('shrooms-guard');
    expect(info.endpoints.map((e) => [e.name, e.subject, e.queue_group])).toEqual([
      ['admit', 'shrooms.guard.admit', 'shrooms-guard'],
      ['control', 'shrooms.guard.control', 'shrooms-guard'],
    ]);
  });

  it('refuses the 4th new task from one device to one session within the window', async () => {
    const device = 'burst.home';
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await ask({ session: 'burst', origin: { device } }));
    expect(results.map((r) => r.admit)).toEqual([true, true, true, false]);
    const err = guardRefusal(results[3]!)!;
    expect(err.key).toBe('LOOP_GUARD');
    expect(Number(err.details.retryAfterSeconds)).toBeGreaterThan(0);
    expect(err.details.limit).toBe(3);
  });

  it('does not count a second admit of the same task', async () => {
    const device = 'again.home';
    const same = taskId();
    for (let i = 0; i < 5; i++) expect((await ask({ session: 'again', taskId: same, origin: { device } })).admit).toBe(true);
    const counters = await guardControl(client, { action: 'counters.get', device, machine: 'homeserver', session: 'again' });
    expect(counters.count).toBe(1);
  });

  it('publishes each refusal for the dashboard', async () => {
    const sub = client.subscribe(subjects.refusal('homeserver', 'private'), { max: 1 });
    await client.flush();
    const d = await ask({ session: 'private', origin: { device: 'pi5.home' } });
    expect(guardRefusal(d)?.key).toBe('NOT_ALLOWED');
    for await (const m of sub) {
      const event = RefusalEventSchema.parse(m.json());
      expect(event).toMatchObject({ machine: 'homeserver', session: 'private', device: 'pi5.home', key: 'NOT_ALLOWED', code: -32053 });
    }
  });

  it('answers the chain rules with their own codes', async () => {
    expect(
      guardRefusal(
        await ask({
          machine: 'm',
          session: 'a',
          chain: ['m/a', 'm/b', 'm/c'],
          depth: 3,
          fromAgent: true,
          origin: { device: 'x.home', from: 'm/c' },
        }),
      )?.key,
    ).toBe('CHAIN_CYCLE');
    expect(
      guardRefusal(
        await ask({
          machine: 'm',
          session: 'e',
          chain: ['m/a', 'm/b', 'm/c', 'm/d'],
          depth: 4,
          fromAgent: true,
          origin: { device: 'x.home', from: 'm/d' },
        }),
      )?.key,
    ).toBe('CHAIN_TOO_DEEP');
  });

  it('holds an agent task for an auto-approving session, and only then', async () => {
    signals.set('pi5/jimmy', { harness: 'pi', autoApprove: true });
    signals.set('laptop/careful', { harness: 'claude', autoApprove: false });
    signals.set('pi5/open', { harness: 'pi', autoApprove: true });
    const agent = { device: 'laptop.home', from: 'laptop/webapp' };
    expect(await ask({ machine: 'pi5', session: 'jimmy', fromAgent: true, origin: agent })).toEqual({ admit: true, hold: true });
    expect(await ask({ machine: 'pi5', session: 'jimmy', fromAgent: false, origin: { device: 'laptop.home' } })).toEqual({
      admit: true,
      hold: false,
    });
    expect(await ask({ machine: 'laptop', session: 'careful', fromAgent: true, origin: agent })).toEqual({ admit: true, hold: false });
    expect(await ask({ machine: 'pi5', session: 'open', fromAgent: true, origin: agent })).toEqual({ admit: true, hold: false });
    expect(await ask({ machine: 'pi5', session: 'gone', fromAgent: true, origin: agent })).toEqual({ admit: true, hold: true });
  });

  it('refuses an agent past its budget and gives the loop-guard place back', async () => {
    const origin = { device: 'budget.home', from: 'budget/agent' };
    const admitted = [];
    for (const session of ['b1', 'b1', 'b2', 'b2']) admitted.push((await ask({ session, fromAgent: true, origin })).admit);
    expect(admitted).toEqual([true, true, true, true]);
    const d = await ask({ session: 'b3', fromAgent: true, origin });
    expect(guardRefusal(d)?.key).toBe('BUDGET_EXCEEDED');
    expect(Number(d.error?.details?.retryAfterSeconds)).toBeGreaterThan(0);
    const counters = await guardControl(client, { action: 'counters.get', device: 'budget.home', machine: 'homeserver', session: 'b3' });
    expect(counters.count).toBe(0);
    // A person on the same device has no budget.
    expect((await ask({ session: 'b3', origin: { device: 'budget.home' } })).admit).toBe(true);
  });

  it('shares a rule set through control with every replica', async () => {
    await guardControl(client, { action: 'policy.set', session: 'homeserver/locked', rule: { devices: ['nobody'] } });
    // Each replica answers at least once among 20 asks (queue group); all must refuse.
    await eventually(async () => {
      const ds = await Promise.all(Array.from({ length: 20 }, () => ask({ session: 'locked' })));
      return ds.every((d) => guardRefusal(d)?.key === 'NOT_ALLOWED');
    });
    const p = await guardControl(client, { action: 'policy.get', session: 'homeserver/locked' });
    expect(p.effective).toMatchObject({ devices: ['nobody'], source: 'homeserver/locked' });
    await guardControl(client, { action: 'policy.clear', session: 'homeserver/locked' });
    // From another device: while a replica had not yet learnt the rule, the asks above that it
    // admitted (new task ids) counted in laptop.home's loop-guard window for this session, and past
    // 30 of them the task asked here would be refused by the window, not the rule (seen once).
    const origin = { device: 'after-clear.home' };
    await eventually(async () => {
      const ds = await Promise.all(Array.from({ length: 20 }, () => ask({ session: 'locked', taskId: 'locked:1', origin })));
      return ds.every((d) => d.admit);
    });
  });

  it('follows the policy file when it changes', async () => {
    expect(guardRefusal(await ask({ session: 'private', origin: { device: 'pi5.home' } }))?.key).toBe('NOT_ALLOWED');
    await writeFile(policyFile, 'sessions:\n  "homeserver/private":\n    devices: [laptop.home, pi5.home]\n');
    await eventually(async () => (await ask({ session: 'private', origin: { device: 'pi5.home' }, taskId: 'private:1' })).admit);
  });

  it('empties a window through control', async () => {
    const device = 'reset.home';
    for (let i = 0; i < 3; i++) await ask({ session: 'reset', origin: { device } });
    expect((await ask({ session: 'reset', origin: { device } })).admit).toBe(false);
    await guardControl(client, { action: 'counters.reset', device, machine: 'homeserver', session: 'reset' });
    expect((await ask({ session: 'reset', origin: { device } })).admit).toBe(true);
  });

  it('answers a malformed request with INVALID_PARAMS, admitting nothing', async () => {
    const d = await askGuard(client, { machine: 'homeserver', session: 'a b', taskId: 'x', origin: { device: 'd' } }, { timeoutMs: 2000 });
    expect(d.admit).toBe(false);
    expect(d.error?.key).toBe('INVALID_PARAMS');
    await expect(guardControl(client, { action: 'policy.set', session: 'no-slash', rule: {} })).rejects.toMatchObject({
      key: 'INVALID_PARAMS',
    });
  });
});
