/**
 * The dashboard's server side on a real nats-server with 10,000 tasks in the ledger: who may see
 * it and who may act, pages that carry only what they show (and read nothing from the ledger),
 * chains from the index, and a live feed that is bounded and freed when the browser goes away.
 * (The page itself is tested in Chromium: test/e2e/dashboard.test.ts.)
 *
 * Over 300 lines: every test reads the one ledger of 10,000 tasks seeded once above them; split,
 * each file would seed its own.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/nats-core';
import { Ledger, SignalField, transitions } from '@shrooms/ledger';
import { createLogger, loadConfig } from '@shrooms/runtime';
import { eventually, startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { buildApp, type Gateway } from '../app.js';
import { GatewayConfigSchema } from '../config.js';
import type { Identify } from '../a2a/caller.js';
import { BOOT, loadScripts } from './assets/page.js';

const N = 10_000;
const PHONE = '10.9.0.2';
let nats: NatsWithConnection;
let nc: NatsConnection;
let ledger: Ledger;
let gw: Gateway;
let url: string;

const identify: Identify = (addr) =>
  /^(127\.|::1$|::ffff:127\.)/.test(addr)
    ? { device: 'box', self: true }
    : addr === PHONE || addr === `::ffff:${PHONE}`
      ? { device: 'phone.home', self: false }
      : undefined;

function seed(session: string, id: string, text: string, metadata: Record<string, unknown> = {}, at = Date.now()) {
  const entry = transitions.newTask({
    id: `${session}:${id}`,
    contextId: `ctx-${id}`,
    message: { messageId: id, role: 'ROLE_USER', parts: [{ text }] },
    metadata: { 'shrooms/device': 'laptop.home', ...metadata },
    queued: false,
    now: new Date(at),
  });
  return ledger.create(ledger.key('box', session, id), entry);
}

beforeAll(async () => {
  nats = await startNatsWithConnection();
  nc = nats.nc;
  ledger = await Ledger.open(nc);
  const signals = await SignalField.open(nc);
  const now = Date.now() - N - 1000;
  for (let i = 0; i < N; i += 500) {
    await Promise.all(Array.from({ length: Math.min(500, N - i) }, (_, j) => seed('big', `m-${i + j}`, `task ${i + j}`, {}, now + i + j)));
  }
  await seed('a', 'root', 'plan the release');
  await seed('b', 'mid', 'run the tests', { 'shrooms/parent': 'box/a:root', 'shrooms/from': 'box/a', 'shrooms/depth': 1 });
  await seed('c', 'leaf', 'check the flaky one', { 'shrooms/parent': 'box/b:mid', 'shrooms/from': 'box/b', 'shrooms/depth': 2 });
  await seed('h', 'held', 'format the disk', { 'shrooms/held': true, 'shrooms/from': 'pi5/jimmy' });
  await seed('h', 'stalled', 'quiet: think', { 'shrooms/stalled': new Date().toISOString(), 'shrooms/nudges': 6 });
  const config = loadConfig(GatewayConfigSchema, {
    SHROOMS_MACHINE: 'box',
    GATEWAY_GUARD: 'off',
    LOG_LEVEL: 'silent',
    GATEWAY_SSE_HEARTBEAT_MS: '200',
  });
  gw = await buildApp({ nc, log: createLogger('test', 'silent'), config, ledger, signals, identify });
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(gw.app.server.address() as { port: number }).port}`;
}, 180_000);

afterAll(async () => {
  await gw?.close();
  await nats?.stop();
});

const get = (path: string, remoteAddress = '127.0.0.1', headers: Record<string, string> = {}) =>
  gw.app.inject({ method: 'GET', url: path, remoteAddress, headers });
const post = (
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json', 'x-shrooms-dashboard': '1' },
  remoteAddress = '127.0.0.1',
) => gw.app.inject({ method: 'POST', url: path, remoteAddress, headers, payload: JSON.stringify(body) });

it('serves the page with nothing from elsewhere and a strict content security policy', async () => {
  for (const path of ['/dashboard', '/dashboard/', '/dashboard/app.js']) {
    const res = await get(path);
    expect(res.statusCode, path).toBe(200);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    expect(res.body).not.toContain('@import');
  }
  const page = await get('/dashboard');
  expect((await get('/dashboard', '127.0.0.1', { 'if-none-match': String(page.headers.etag) })).statusCode).toBe(304);
});

it('serves each module of the page script with its ETag and the same policy (test/page.setup.ts built them)', async () => {
  for (const name of [...loadScripts()!.keys()].filter((n) => n !== BOOT)) {
    const res = await get(`/dashboard/${name}`);
    expect(res.statusCode, name).toBe(200);
    expect(res.headers['content-type'], name).toBe('text/javascript; charset=utf-8');
    expect(res.headers['content-security-policy'], name).toContain("script-src 'self'");
    expect((await get(`/dashboard/${name}`, '127.0.0.1', { 'if-none-match': String(res.headers.etag) })).statusCode, name).toBe(304);
  }
  // Not a module of the page, and what is in the page itself.
  for (const name of ['wire.js', BOOT, 'app.css']) expect((await get(`/dashboard/${name}`)).statusCode, name).toBe(404);
});

it('answers a path it does not have in its own error shape, under its policy', async () => {
  for (const [method, path] of [
    ['GET', '/dashboard/api/nope?x=1'],
    ['POST', '/dashboard/api/tasks/cancelx'],
  ] as const) {
    const res = await gw.app.inject({ method, url: path, remoteAddress: '127.0.0.1' });
    expect(res.statusCode, path).toBe(404);
    expect(res.json().error, path).toMatchObject({
      key: 'METHOD_NOT_FOUND',
      message: `the dashboard has no ${method} ${path.split('?')[0]}`,
    });
    expect(res.headers['content-security-policy'], path).toContain("default-src 'none'");
  }
});

it('answers nothing to a source address that is not a device of the mesh', async () => {
  const api = ['overview', 'tasks'].map((r) => `/dashboard/api/${r}`);
  for (const path of ['/dashboard', '/dashboard/app.js', '/dashboard/task.js', ...api, '/dashboard/events']) {
    const res = await get(path, '203.0.113.9');
    expect(res.statusCode, path).toBe(403);
    expect(res.body).toContain('not a device of the mesh');
  }
});

it('answers nothing to a host name it does not know (DNS rebinding)', async () => {
  const res = await get('/dashboard/api/overview', '127.0.0.1', { host: 'attacker.example:7387' });
  expect(res.statusCode).toBe(403);
  expect(res.json().error.key).toBe('CROSS_SITE_REFUSED');
  expect((await get('/dashboard/api/overview', '127.0.0.1', { host: 'box:7387' })).statusCode).toBe(200);
  expect((await get('/dashboard/api/overview', '127.0.0.1', { host: '[::1]:7387' })).statusCode).toBe(200);
});

it('shows a mesh device everything but lets only this machine itself act', async () => {
  const o = (await get('/dashboard/api/overview', PHONE)).json();
  expect(o.viewer).toEqual({ device: 'phone.home', self: false });
  expect(o.counts.total).toBe(N + 5);
  const res = await post('/dashboard/api/tasks/cancel', { key: 'box.h.held' }, undefined, PHONE);
  expect(res.statusCode).toBe(403);
  expect(res.json().error.key).toBe('ACTION_FORBIDDEN');
  expect((await get('/dashboard/api/overview')).json().viewer).toEqual({ device: 'box', self: true });
});

it('takes actions only from its own page: a JSON body, its header, its own origin', async () => {
  const form = await post(
    '/dashboard/api/tasks/cancel',
    { key: 'box.h.held' },
    { 'content-type': 'text/plain', origin: 'http://attacker.example' },
  );
  expect(form.statusCode).toBe(403);
  const noHeader = await post('/dashboard/api/tasks/cancel', { key: 'box.h.held' }, { 'content-type': 'text/plain' });
  expect(noHeader.json().error.key).toBe('CONTENT_TYPE_NOT_SUPPORTED'); // no browser page: refused all the same
  const noDashboardHeader = await post('/dashboard/api/tasks/cancel', { key: 'box.h.held' }, { 'content-type': 'application/json' });
  expect(noDashboardHeader.statusCode).toBe(403);
  const crossSite = await post(
    '/dashboard/api/tasks/cancel',
    { key: 'box.h.held' },
    { 'content-type': 'application/json', 'x-shrooms-dashboard': '1', origin: 'http://attacker.example' },
  );
  expect(crossSite.statusCode).toBe(403);
  expect((await ledger.get('box.h.held'))!.entry.task.status.state).toBe('TASK_STATE_SUBMITTED');
});

it('lets only this machine itself see or reset a loop-guard window', async () => {
  for (const [method, path] of [
    ['GET', '/dashboard/api/guard?agent=box%2Fa'],
    ['POST', '/dashboard/api/guard/reset'],
  ] as const) {
    const res = method === 'GET' ? await get(path, PHONE) : await post(path, { agent: 'box/a', device: 'phone.home' }, undefined, PHONE);
    expect(res.statusCode, path).toBe(403);
    expect(res.json().error.key, path).toBe('ACTION_FORBIDDEN');
  }
  // The owner passes the rule; this gateway runs without a guard, so there is no window to show.
  const own = await get('/dashboard/api/guard?agent=box%2Fa');
  expect(own.json().error.key).toBe('GUARD_UNAVAILABLE');
  expect((await get('/dashboard/api/guard?agent=pi5%2Fa')).json().error.key).toBe('NOT_ALLOWED');
});

it('refuses to release a task that is not held', async () => {
  const res = await post('/dashboard/api/tasks/release', { key: 'box.h.stalled' });
  expect(res.statusCode).toBe(400);
  expect(res.json().error.key).toBe('UNSUPPORTED_OPERATION');
});

it('pages 10,000 tasks fifty at a time without reading the ledger', async () => {
  const reads = ledger.reads;
  const first = await get('/dashboard/api/tasks?agent=box%2Fbig&limit=50');
  const p1 = first.json();
  expect(p1.rows).toHaveLength(50);
  expect(p1.total).toBe(N);
  expect(p1.rows[0].name).toBe(`box/big:m-${N - 1}`);
  expect(first.body.length).toBeLessThan(50 * 1024);
  const p2 = (await get(`/dashboard/api/tasks?agent=box%2Fbig&limit=50&cursor=${p1.next}`)).json();
  expect(p2.rows[0].name).toBe(`box/big:m-${N - 51}`);
  expect(p2.rows.filter((r: { key: string }) => p1.rows.some((x: { key: string }) => x.key === r.key))).toEqual([]);
  expect(ledger.reads).toBe(reads);
});

it('filters by session and by state', async () => {
  const held = (await get('/dashboard/api/tasks?state=held')).json();
  expect(held.rows.map((r: { name: string }) => r.name)).toEqual(['box/h:held']);
  expect(held.rows[0].from).toBe('laptop.home (pi5/jimmy)');
  const stalled = (await get('/dashboard/api/tasks?state=stalled')).json();
  expect(stalled.rows.map((r: { name: string }) => r.name)).toEqual(['box/h:stalled']);
  expect((await get('/dashboard/api/tasks?agent=box%2Fc')).json().total).toBe(1);
  expect((await get('/dashboard/api/tasks?state=bogus')).statusCode).toBe(400);
  const attention = (await get('/dashboard/api/attention')).json();
  expect([attention.held.length, attention.stalled.length]).toEqual([1, 1]);
});

it("searches tasks' names, texts and askers in any case, taking the query's characters as they are", async () => {
  const names = async (q: string) =>
    (await get(`/dashboard/api/tasks?q=${encodeURIComponent(q)}`)).json().rows.map((r: { name: string }) => r.name);
  const reads = ledger.reads;
  expect(await names('FORMAT the')).toEqual(['box/h:held']);
  expect(await names('Pi5/Jim')).toEqual(['box/h:held']);
  expect(await names('box/c:LEAF')).toEqual(['box/c:leaf']);
  expect(await names('task 9999')).toEqual(['box/big:m-9999']);
  expect((await get('/dashboard/api/tasks?agent=box%2Fbig&q=TASK%20999')).json().total).toBe(11);
  expect(await names('(pi5/')).toEqual(['box/h:held']);
  for (const literal of ['.*', 'm-1[', '(x', 'task 1+', '\\']) expect(await names(literal)).toEqual([]);
  expect(ledger.reads).toBe(reads);
});

it('builds a chain from its root down through shrooms/parent', async () => {
  const { chain } = (await get('/dashboard/api/chain?key=box.c.leaf')).json();
  expect(chain.size).toBe(3);
  expect(chain.root.row.name).toBe('box/a:root');
  expect(chain.root.row.origin).toBe('person');
  expect(chain.root.children[0].row.name).toBe('box/b:mid');
  expect(chain.root.children[0].children[0].row.name).toBe('box/c:leaf');
  const list = (await get('/dashboard/api/chains')).json();
  expect(list.total).toBe(1);
  const detail = (await get('/dashboard/api/task?key=box.b.mid')).json();
  expect(detail.children.map((r: { name: string }) => r.name)).toEqual(['box/c:leaf']);
  expect(detail.chainSize).toBe(3);
});

/** Opens the live feed and reads until `until` shows up in what arrived. */
async function feed(until: RegExp, ctl = new AbortController()) {
  const res = await fetch(`${url}/dashboard/events`, { signal: ctl.signal });
  if (res.status !== 200) return { res, text: '', ctl };
  const reader = res.body!.getReader();
  let text = '';
  while (!until.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  return { res, text, ctl, reader };
}

it('sends task changes to an open feed, with heartbeats', async () => {
  const f = await feed(/event: hello/);
  expect(f.res.headers.get('content-type')).toContain('text/event-stream');
  await ledger.transition('box.a.root', (e) => transitions.start(e, new Date()));
  let text = f.text;
  while (!/event: tasks[^\n]*\ndata: [^\n]*box\.a\.root[^\n]*TASK_STATE_WORKING/.test(text) || !text.includes(': ping')) {
    const { value, done } = await f.reader!.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  expect(text).toContain(': ping');
  f.ctl.abort();
});

it('bounds the live feeds and frees one when its browser goes away', async () => {
  const small = await buildApp({
    nc,
    log: createLogger('test', 'silent'),
    config: loadConfig(GatewayConfigSchema, {
      SHROOMS_MACHINE: 'box',
      GATEWAY_GUARD: 'off',
      LOG_LEVEL: 'silent',
      DASHBOARD_MAX_STREAMS: '2',
    }),
    ledger,
    signals: await SignalField.open(nc),
    identify,
  });
  await small.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(small.app.server.address() as { port: number }).port}`;
  const open = async () => {
    const ctl = new AbortController();
    const res = await fetch(`${base}/dashboard/events`, { signal: ctl.signal });
    if (res.status === 200) {
      const reader = res.body!.getReader();
      for (let t = ''; !t.includes('event: hello');) t += new TextDecoder().decode((await reader.read()).value);
    }
    return { res, ctl };
  };
  try {
    const a = await open();
    const b = await open();
    const c = await open();
    expect([a.res.status, b.res.status, c.res.status]).toEqual([200, 200, 503]);
    a.ctl.abort();
    const d = await eventually(async () => {
      const x = await open();
      if (x.res.status === 200) return x;
      x.ctl.abort();
      return undefined;
    }, 10_000);
    d.ctl.abort();
    b.ctl.abort();
  } finally {
    await small.close();
  }
});
