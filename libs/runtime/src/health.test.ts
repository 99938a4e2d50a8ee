import { afterEach, describe, expect, it } from 'vitest';
import { HealthConfigSchema, healthKey, healthProbe, startHealthServer, type HealthServer } from './health.js';

const servers: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(opts: Parameters<typeof startHealthServer>[0]): Promise<HealthServer> {
  const s = await startHealthServer(opts);
  if (!s) throw new Error('no server');
  servers.push(s);
  return s;
}

async function get(url: string): Promise<{ code: number; body: any }> {
  const res = await fetch(url);
  return { code: res.status, body: await res.json() };
}

describe('startHealthServer', () => {
  it('starts nothing when no port is given', async () => {
    expect(await startHealthServer({ checks: {} })).toBeUndefined();
  });

  it('answers /readyz with 200 and every check when all pass', async () => {
    const s = await start({ port: 0, checks: { nats: () => true, jetstream: async () => true } });
    expect(await get(`${s.url}/readyz`)).toEqual({ code: 200, body: { status: 'ok', checks: { nats: true, jetstream: true } } });
  });

  it('answers /readyz with 503 and the reason when a check fails, throws or hangs', async () => {
    const s = await start({
      port: 0,
      timeoutMs: 50,
      checks: {
        nats: () => true,
        ledger: async () => Promise.reject(new Error('no quorum')),
        jetstream: () => new Promise<boolean>(() => {}),
        off: () => false,
      },
    });
    const { code, body } = await get(`${s.url}/readyz`);
    expect(code).toBe(503);
    expect(body.status).toBe('unavailable');
    expect(body.checks).toEqual({ nats: true, ledger: false, jetstream: false, off: false });
    expect(body.errors.ledger).toBe('no quorum');
    expect(body.errors.jetstream).toMatch(/no answer within 50 ms/);
  });

  it('keeps /healthz free of readiness checks', async () => {
    const s = await start({ port: 0, checks: { nats: () => false } });
    expect((await get(`${s.url}/healthz`)).code).toBe(200);
    expect((await get(`${s.url}/readyz`)).code).toBe(503);
  });

  it('fails /healthz when a liveness check fails', async () => {
    const s = await start({ port: 0, checks: {}, live: { nats: () => false } });
    expect((await get(`${s.url}/healthz`)).code).toBe(503);
  });

  it('shares one evaluation between probes within the cache time', async () => {
    let runs = 0;
    const s = await start({ port: 0, cacheMs: 60_000, checks: { count: () => ++runs > 0 } });
    await Promise.all([get(`${s.url}/readyz`), get(`${s.url}/readyz`), get(`${s.url}/readyz`)]);
    expect(runs).toBe(1);
  });

  it('answers other paths with 404', async () => {
    const s = await start({ port: 0, checks: {} });
    expect((await get(`${s.url}/metrics`)).code).toBe(404);
  });
});

describe('HealthConfigSchema', () => {
  it('reads an unset or empty HEALTH_PORT as no health server', () => {
    expect(HealthConfigSchema.parse({}).HEALTH_PORT).toBeUndefined();
    expect(HealthConfigSchema.parse({ HEALTH_PORT: '' }).HEALTH_PORT).toBeUndefined();
    expect(HealthConfigSchema.parse({ HEALTH_PORT: '9102' })).toEqual({ HEALTH_PORT: 9102, HEALTH_HOST: '127.0.0.1' });
  });
});

describe('healthKey', () => {
  it('builds a key no encoded task key can equal', () => {
    expect(healthKey('pi5', 'bridge-my.session')).toBe('_health.pi5.bridge-my_2Esession');
  });
});

describe('healthProbe', () => {
  it('reports like /readyz without a server', async () => {
    expect(await healthProbe({ nats: () => true, ledger: () => false })()).toEqual({
      status: 'unavailable',
      checks: { nats: true, ledger: false },
      errors: { ledger: 'check returned false' },
    });
  });

  it('runs its checks once for probes that come together or within the cache time, again after', async () => {
    let runs = 0;
    const probe = healthProbe({ ledger: () => (runs++, true) }, { cacheMs: 60_000 });
    await Promise.all([probe(), probe(), probe()]);
    await probe();
    expect(runs).toBe(1);
    const fresh = healthProbe({ ledger: () => (runs++, true) }, { cacheMs: 0 });
    await fresh();
    await fresh();
    expect(runs).toBe(3);
  });
});
