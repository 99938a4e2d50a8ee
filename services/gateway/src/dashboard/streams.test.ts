/**
 * The live feed's bounds while the feed is starting, on a real nats-server and a listening gateway
 * with real HTTP clients. The feed's start (one read of the whole ledger) is held at a gate the test
 * opens, so a browser can leave, or several can arrive, while it waits — as a slow start on a large
 * ledger lets them.
 */
import http from 'node:http';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { Ledger, SignalField } from '@shrooms/ledger';
import { createLogger, loadConfig } from '@shrooms/runtime';
import { eventually, startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { buildApp, type Gateway } from '../app.js';
import { GatewayConfigSchema } from '../config.js';

let nats: NatsWithConnection;
let ledger: Ledger;
let signals: SignalField;
let gw: Gateway | undefined;
/** Every client a test opened, closed after it (an open feed would hold the gateway's close). */
const clients: AbortController[] = [];

beforeAll(async () => {
  nats = await startNatsWithConnection();
  ledger = await Ledger.open(nats.nc);
  signals = await SignalField.open(nats.nc);
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.abort();
  await gw?.close();
  gw = undefined;
});

afterAll(async () => {
  await nats?.stop();
});

/**
 * A gateway with room for one live feed, whose feed start waits at a gate: `started` resolves when
 * the feed has begun to read the ledger; `ready()` opens the gate and resolves once the feed is up.
 */
async function gatedGateway() {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let entered!: () => void;
  const started = new Promise<void>((r) => (entered = r));
  const gated = new Proxy(ledger, {
    get(target, prop) {
      if (prop === 'watch') {
        return async (...args: Parameters<Ledger['watch']>) => {
          if (args[0] === '>') {
            entered(); // the dashboard's whole-ledger watch (LiveTasks watches this machine only)
            await gate;
          }
          return target.watch(...args);
        };
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  gw = await buildApp({
    nc: nats.nc,
    log: createLogger('test', 'silent'),
    config: loadConfig(GatewayConfigSchema, {
      SHROOMS_MACHINE: 'box',
      GATEWAY_GUARD: 'off',
      LOG_LEVEL: 'silent',
      DASHBOARD_MAX_STREAMS: '1',
    }),
    ledger: gated,
    signals,
  });
  let arrivals = 0;
  gw.app.addHook('preHandler', async (req) => {
    if (req.url === '/dashboard/events') arrivals++;
  });
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(gw.app.server.address() as { port: number }).port}`;
  const app = gw.app;
  /** Resolves once the feed has started: every request that waited for it has gone on. */
  const ready = async () => {
    open();
    const res = await app.inject({ method: 'GET', url: '/dashboard/api/overview', remoteAddress: '127.0.0.1' });
    expect(res.statusCode).toBe(200);
  };
  const connections = () => new Promise<number>((r, j) => app.server.getConnections((err, n) => (err ? j(err) : r(n))));
  return { base, started, ready, connections, arrivals: () => arrivals };
}

/** Opens the live feed; on 200, reads until its `hello` event. */
async function follow(base: string) {
  const ctl = new AbortController();
  clients.push(ctl);
  const res = await fetch(`${base}/dashboard/events`, { signal: ctl.signal });
  if (res.status === 200) {
    const reader = res.body!.getReader();
    for (let t = ''; !t.includes('event: hello');) t += new TextDecoder().decode((await reader.read()).value);
  }
  return res.status;
}

it('keeps no live feed for a browser that left while the feed was starting', async () => {
  const g = await gatedGateway();
  const leaving = http.get(`${g.base}/dashboard/events`).on('error', () => {});
  await g.started;
  leaving.destroy(); // the browser closes its connection, as a reload or a closed tab does
  await eventually(async () => (await g.connections()) === 0); // the gateway has seen it go
  await g.ready();
  expect(await follow(g.base)).toBe(200); // the one place was not kept for the browser that left
});

it('lets no more browsers follow than it has room for when they all arrive while the feed starts', async () => {
  const g = await gatedGateway();
  const first = follow(g.base);
  await g.started;
  const second = follow(g.base);
  await eventually(() => g.arrivals() === 2); // both have passed every check before the wait for the feed
  await g.ready();
  expect((await Promise.all([first, second])).sort()).toEqual([200, 503]);
});
