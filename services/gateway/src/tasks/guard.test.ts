/**
 * The gateway's two ways to admission against a real nats-server: in its own process (`localGuard`)
 * and through the guard service (`natsGuard`) decide over the same windows, so a device's window is
 * exact whichever way each of its tasks came in; both fail closed; GATEWAY_GUARD's values.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { openAdmission, type Admission } from '@shrooms/admission';
import { GuardAdmitRequestSchema, isShroomsError, QUEUE_GROUPS, subjects } from '@shrooms/protocol';
import { addService, connectNats, createLogger, jsonEndpoint, loadConfig, type Service } from '@shrooms/runtime';
import { startNatsServer, type NatsServerHandle } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayConfigSchema } from '../config.js';
import { localGuard, natsGuard } from './guard.js';
import type { GuardPort } from './service.js';

const log = createLogger('gateway-guard-test', 'silent');
const settings = { SHROOMS_MACHINE: 'box', GUARD_RATE_MAX: '5', GUARD_CAS_DEADLINE_MS: '10000', LOG_LEVEL: 'silent' };
const question = (taskId: string, session = 'review') => ({
  machine: 'box',
  session,
  taskId,
  caller: { device: 'laptop.home', machine: 'laptop', self: false },
  chain: [],
  depth: 0,
  metadata: {},
  scheduled: false,
});
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'admitted',
    (err: unknown) => (isShroomsError(err) ? err.key : `thrown: ${String(err)}`),
  );

describe('admission in the gateway', () => {
  let server: NatsServerHandle;
  const conns: NatsConnection[] = [];
  let local: GuardPort;
  let remote: GuardPort;
  let admission: Admission;
  let served: Admission;
  let service: Service;

  beforeAll(async () => {
    server = await startNatsServer();
    const config = loadConfig(GatewayConfigSchema, { ...settings, NATS_URL: server.url });
    const [gatewayNc, guardNc] = [await connectNats(config, log, 'gw'), await connectNats(config, log, 'guard')];
    conns.push(gatewayNc, guardNc);
    admission = await openAdmission({ nc: gatewayNc, log, config });
    local = localGuard(admission);
    // The guard service's admit endpoint, as services/guard serves it, on another connection.
    served = await openAdmission({ nc: guardNc, log, config });
    service = await addService(guardNc, { name: 'shrooms-guard', version: '0.0.0', description: 'test guard', queue: QUEUE_GROUPS.guard });
    const endpoint = { subject: subjects.guardAdmit(), queue: QUEUE_GROUPS.guard };
    jsonEndpoint(
      service,
      'admit',
      endpoint,
      (d) => GuardAdmitRequestSchema.parse(d),
      (req) => served.admit(req),
      log,
    );
    remote = natsGuard(gatewayNc, 10_000);
    // The endpoint's subscription reaches nats-server before a request from another connection does.
    await guardNc.flush();
  });
  afterAll(async () => {
    admission?.close();
    served?.close();
    await service?.stop();
    for (const nc of conns) await nc.close();
    await server?.stop();
  });

  it('admits exactly the window, 5 of 16 concurrent new tasks, half asked in the process and half of the guard', async () => {
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => outcome((i % 2 ? local : remote).admit(question(`review:mixed-${i}`)))),
    );
    expect(
      results.filter((r) => r === 'admitted'),
      results.join(', '),
    ).toHaveLength(5);
    expect(
      results.filter((r) => r === 'LOOP_GUARD'),
      results.join(', '),
    ).toHaveLength(11);
    expect(await local.control!({ action: 'counters.get', device: 'laptop.home', machine: 'box', session: 'review' })).toMatchObject({
      count: 5,
      limit: 5,
    });
  });

  it('shares one window between the ways: places taken in the process are gone for the guard and back', async () => {
    await local.control!({ action: 'counters.reset', device: 'laptop.home', machine: 'box', session: 'turns' });
    const ask = (g: GuardPort, i: number) => outcome(g.admit(question(`turns:${i}`, 'turns')));
    const order = [local, local, local, remote, remote, remote, local];
    const results = [];
    for (const [i, g] of order.entries()) results.push(await ask(g, i));
    expect(results).toEqual(['admitted', 'admitted', 'admitted', 'admitted', 'admitted', 'LOOP_GUARD', 'LOOP_GUARD']);
  });

  it('counts a task id once, however often and whichever way it is asked', async () => {
    await local.control!({ action: 'counters.reset', device: 'laptop.home', machine: 'box', session: 'again' });
    const same = await Promise.all([local, remote, local, remote].map((g) => outcome(g.admit(question('again:1', 'again')))));
    expect(same).toEqual(['admitted', 'admitted', 'admitted', 'admitted']);
    expect(await local.control!({ action: 'counters.get', device: 'laptop.home', machine: 'box', session: 'again' })).toMatchObject({
      count: 1,
    });
  });

  it('refuses a bad request with INVALID_PARAMS and, when the windows cannot be written, with GUARD_UNAVAILABLE', async () => {
    expect(await outcome(local.admit(question('x:1', 'no such/name')))).toBe('INVALID_PARAMS');
    const nc = await connectNats({ NATS_URL: server.url }, log, 'gw-closing');
    const config = loadConfig(GatewayConfigSchema, { ...settings, NATS_URL: server.url });
    const doomed = await openAdmission({ nc, log, config });
    await nc.close();
    expect(await outcome(localGuard(doomed).admit(question('closed:1', 'closed')))).toBe('GUARD_UNAVAILABLE');
    doomed.close();
  });
});

describe('GATEWAY_GUARD', () => {
  const guardOf = (v?: string) =>
    loadConfig(GatewayConfigSchema, { SHROOMS_MACHINE: 'box', ...(v ? { GATEWAY_GUARD: v } : {}) }).GATEWAY_GUARD;
  it('admits in the process by default; `required`, its former name, asks the service; anything else is refused', () => {
    expect(guardOf()).toBe('local');
    expect(guardOf('service')).toBe('service');
    expect(guardOf('required')).toBe('service');
    expect(guardOf('off')).toBe('off');
    expect(() => guardOf('maybe')).toThrow(/GATEWAY_GUARD/);
  });
});
