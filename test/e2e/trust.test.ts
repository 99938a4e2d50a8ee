/**
 * The threat model (docs/security.md), one test per row, as an attacker would try it: devices on
 * real network addresses (network namespaces joined by veth pairs, made here and removed after),
 * the mesh's processes logged in to a real nats-server with the generated users and permissions,
 * and a browser's requests as a web page in the owner's browser could make them.
 *
 *   box (this host)   NATS, gateway (127.0.0.1 and 198.18.{0,1,2}.1), guard, scheduler, bridges
 *   tr-a  laptop.home 198.18.0.2   a device of the mesh (asks for work)
 *   tr-b  pi5.home    198.18.1.2   another device of the mesh
 *   tr-c  —           198.18.2.2   an address the mesh does not name
 *
 * Over 300 lines: one test per row of the threat model, all on one set of namespaces and one mesh
 * (made once: root, veths, processes), so the model reads as one file.
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { BUCKETS, keys, kvSubject, occurrenceMessageId } from '@shrooms/protocol';
import {
  eventually,
  netnsUnavailable,
  prepareLocalNats,
  startMesh,
  startNatsServer,
  startNetns,
  tempDir,
  type LocalNats,
  type Mesh,
  type NatsServerHandle,
  type Netns,
  type NetnsDevice,
  type TempDir,
} from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const why = netnsUnavailable();
const SESSIONS = ['target', 'auto', 'perm', 'deep'];

let temp: TempDir | undefined;
let tmp: string;
let net: Netns;
let auth: LocalNats;
let mesh: Mesh;
let admin: NatsConnection;
let nats: NatsServerHandle | undefined;
let laptop: NetnsDevice;
let pi5: NetnsDevice;
let stranger: NetnsDevice;
let port: number;

const rpcBody = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const JSON_HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0' };
const msg = (id: string, text: string, extra: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  message: { messageId: id, role: 'ROLE_USER', parts: [{ text }], ...extra },
  configuration: { returnImmediately: true },
  ...(Object.keys(metadata).length ? { metadata } : {}),
});

/** A JSON-RPC call from a device, to the gateway's address on that device's link. */
async function rpcFrom(dev: NetnsDevice, session: string, method: string, params: unknown): Promise<any> {
  const res = await dev.request(`http://${dev.hostAddress}:${port}/a2a/${session}`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: rpcBody(method, params),
  });
  return res.json();
}

/** A request from this machine itself (the owner, or a page in the owner's browser), any headers. */
function local(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; text: string; json(): any }>((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text, json: () => JSON.parse(text) }));
    });
    r.on('error', reject);
    r.end(init.body);
  });
}
const ownerRpc = async (session: string, method: string, params: unknown) =>
  (await local(`/a2a/${session}`, { method: 'POST', headers: JSON_HEADERS, body: rpcBody(method, params) })).json();
const task = async (session: string, id: string) => (await ownerRpc(session, 'GetTask', { id })).result;
const until = (session: string, id: string, check: (t: any) => boolean) =>
  eventually(async () => {
    const t = await task(session, id);
    return t && check(t) ? t : undefined;
  }, 30_000);

describe.skipIf(why !== undefined)(`trust across the mesh${why ? ` (skipped: ${why})` : ''}`, () => {
  beforeAll(async () => {
    temp = await tempDir('shrooms-trust');
    tmp = temp.path;
    net = await startNetns('tr', ['a', 'b', 'c']);
    [laptop, pi5, stranger] = net.devices as [NetnsDevice, NetnsDevice, NetnsDevice];
    const peers = join(tmp, 'peers.yaml');
    await writeFile(peers, `mesh: home\npeers:\n  ${laptop.address}: laptop\n  ${pi5.address}: pi5\n`);
    auth = await prepareLocalNats(tmp, 'box', SESSIONS);
    nats = await startNatsServer({ args: ['-c', auth.confFile], env: auth.serverEnv });
    const hosts = net.devices.map((d) => d.hostAddress);
    mesh = await startMesh({
      machine: 'box',
      nats,
      guard: true,
      scheduler: true,
      env: {
        SHROOMS_PEERS_FILE: peers,
        GATEWAY_HOST: ['127.0.0.1', ...hosts].join(','),
        SHROOMS_MESH_ADDRESSES: hosts.join(','),
        GUARD_BUDGET_MAX: '3',
      },
      serviceEnv: { gateway: auth.login('gateway'), guard: auth.login('guard'), scheduler: auth.login('scheduler') },
      sessions: SESSIONS.map((name) => ({
        name,
        env: { ...auth.sessionLogin(name), ...(name === 'auto' ? { BRIDGE_AUTO_APPROVE: '1' } : {}) },
      })),
    });
    port = mesh.gatewayPort;
    const a = auth.login('admin');
    admin = await connect({ servers: nats.url, user: a.NATS_USER, pass: a.NATS_PASS });
  }, 180_000);

  afterAll(async () => {
    try {
      await admin?.close().catch(() => {});
      await mesh?.stop();
      await nats?.stop(); // given to the mesh, so not stopped by it
      net?.teardown();
    } finally {
      await temp?.remove();
    }
  });

  describe('an address the mesh does not name', () => {
    it('gets UNKNOWN_DEVICE on every route: /agents, the cards, every binding of v1.0 and v0.3, the dashboard', async () => {
      const base = `http://${stranger.hostAddress}:${port}`;
      for (const path of [
        '/agents',
        '/.well-known/agent-card.json',
        '/a2a/.well-known/agent-card.json',
        '/a2a/target/.well-known/agent-card.json',
        '/a2a/target/tasks',
        '/a2a/target/tasks/target:s-0',
        '/a2a/target/extendedAgentCard',
        '/a2a/target/v1/card',
        '/a2a/target/v1/tasks/target:s-0',
        '/dashboard/',
        '/dashboard/api/overview',
        '/no-such-route',
      ]) {
        const res = await stranger.request(`${base}${path}`);
        expect(res.status, path).toBe(403);
        expect(res.text, path).toContain('UNKNOWN_DEVICE');
      }
      // HTTP+JSON sends, v1.0 and v0.3: refused before the body is read, so nothing is created.
      for (const [path, body] of [
        ['/a2a/target/message:send', JSON.stringify(msg('s-3', 'hi'))],
        ['/a2a/target/message:stream', JSON.stringify(msg('s-4', 'hi'))],
        [
          '/a2a/target/v1/message:send',
          JSON.stringify({ message: { kind: 'message', messageId: 's-5', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } }),
        ],
        ['/a2a/target/tasks/target:s-0:cancel', '{}'],
      ] as const) {
        const res = await stranger.request(`${base}${path}`, { method: 'POST', headers: JSON_HEADERS, body });
        expect(res.status, path).toBe(403);
        expect(res.text, path).toContain('UNKNOWN_DEVICE');
      }
      // JSON-RPC: the machine's root endpoint, a session's, v0.3's method names on it.
      for (const [path, body] of [
        ['/a2a', rpcBody('SendMessage', msg('s-6', 'hi', {}, { 'shrooms/session': 'target' }))],
        ['/a2a/', rpcBody('SendMessage', msg('s-8', 'hi', {}, { 'shrooms/session': 'target' }))],
        [
          '/a2a/target',
          rpcBody('message/send', { message: { kind: 'message', messageId: 's-7', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } }),
        ],
        ['/a2a/target', rpcBody('ListTasks', {})],
      ] as const) {
        const res = await stranger.request(`${base}${path}`, { method: 'POST', headers: JSON_HEADERS, body });
        expect(res.json().error.code, `${path} ${body}`).toBe(-32054);
      }
      // The health probes alone answer anyone (they reveal nothing; orchestrators probe from outside).
      expect((await stranger.request(`${base}/healthz`)).status).toBe(200);
      for (const id of ['s-3', 's-4', 's-5', 's-6', 's-7', 's-8']) expect(await task('target', `target:${id}`)).toBeUndefined();
      const rpc = await stranger.request(`${base}/a2a/target`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: rpcBody('SendMessage', msg('s-1', 'hi')),
      });
      expect(rpc.json().error.code).toBe(-32054);
      // The same with the trailing slash clients derive from the printed endpoint.
      const slash = await stranger.request(`${base}/a2a/target/`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: rpcBody('SendMessage', msg('s-2', 'hi')),
      });
      expect(slash.json().error.code).toBe(-32054);
      expect(await task('target', 'target:s-1')).toBeUndefined();
      expect(await task('target', 'target:s-2')).toBeUndefined();
    });
  });

  describe("another device's task", () => {
    it('is answered, canceled and acknowledged only by the device that asked (or the owner), never by another device', async () => {
      const asked = (await rpcFrom(laptop, 'target', 'SendMessage', msg('b-1', 'blocked: which branch?'))).result.task;
      await until('target', asked.id, (t) => t.status.state === 'TASK_STATE_INPUT_REQUIRED');
      const answer = await rpcFrom(pi5, 'target', 'SendMessage', msg('b-1-pi5', 'blocked: rm -rf', { taskId: asked.id }));
      expect(answer.error.code).toBe(-32065);
      const cancel = await rpcFrom(pi5, 'target', 'CancelTask', { id: asked.id });
      expect(cancel.error.code).toBe(-32065);
      const rest = await pi5.request(`http://${pi5.hostAddress}:${port}/a2a/target/tasks/${encodeURIComponent(asked.id)}:cancel`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: '{}',
      });
      expect(rest.status).toBe(403);
      expect(rest.json().error.details[0].reason).toBe('ACTION_FORBIDDEN');
      expect((await rpcFrom(pi5, 'target', 'AckTask', { id: asked.id })).error.code).toBe(-32065);
      // Nor may it finish the task as if it were the worker, whatever session it claims.
      const forged = await rpcFrom(pi5, 'target', 'UpdateTask', {
        id: asked.id,
        status: 'done',
        text: 'forged',
        metadata: { 'shrooms/from': 'box/target' },
      });
      expect(forged.error.code).toBe(-32060);
      expect((await task('target', asked.id)).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      // The asker answers it, and it works on and finishes.
      expect((await rpcFrom(laptop, 'target', 'SendMessage', msg('b-1-re', 'main', { taskId: asked.id }))).result).toBeDefined();
      await until('target', asked.id, (t) => t.status.state === 'TASK_STATE_COMPLETED');
      expect((await rpcFrom(laptop, 'target', 'AckTask', { id: asked.id })).result.metadata['shrooms/acknowledged']).toBeDefined();
      // The asker cancels its own.
      const other = (await rpcFrom(laptop, 'target', 'SendMessage', msg('b-2', 'blocked: later'))).result.task;
      await until('target', other.id, (t) => t.status.state === 'TASK_STATE_INPUT_REQUIRED');
      expect((await rpcFrom(laptop, 'target', 'CancelTask', { id: other.id })).result.status.state).toBe('TASK_STATE_CANCELED');
    });

    it("has its permission prompt answered only from the owner's machine, with exactly allow or deny", async () => {
      const asked = (await rpcFrom(laptop, 'perm', 'SendMessage', msg('p-1', 'permission: Bash'))).result.task;
      await until('perm', asked.id, (t) => t.status.state === 'TASK_STATE_INPUT_REQUIRED' && !!t.metadata['shrooms/permission']);
      for (const dev of [laptop, pi5]) {
        const r = await rpcFrom(dev, 'perm', 'SendMessage', msg(`p-1-${dev.ns}`, 'allow', { taskId: asked.id }));
        expect(r.error.code, dev.ns).toBe(-32065);
      }
      const loose = (await ownerRpc('perm', 'SendMessage', msg('p-1-loose', 'go away', { taskId: asked.id }))).result.task;
      expect(loose.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(loose.status.message.parts[0].text).toMatch(/not an answer/);
      await ownerRpc('perm', 'SendMessage', msg('p-1-allow', 'allow', { taskId: asked.id }));
      const done = await until('perm', asked.id, (t) => t.status.state === 'TASK_STATE_COMPLETED');
      expect(done.artifacts[0].parts[0].text).toBe('allowed Bash');
      expect(done.metadata['shrooms/permission_answer']).toMatchObject({ answer: 'allow', tool: 'Bash', by: 'box' });
    });
  });

  describe('a web page in the owner’s browser', () => {
    it('cannot release, update, schedule or act on the dashboard: cross-site text/plain and foreign Host refused on every binding, nothing changed', async () => {
      const held = (await rpcFrom(laptop, 'auto', 'SendMessage', msg('h-1', 'deploy it', {}, { 'shrooms/from': 'laptop/agent' }))).result
        .task;
      expect(held.metadata['shrooms/held']).toBe(true);
      const key = keys.task('box', 'auto', 'h-1');
      const attempts: { path: string; body: string }[] = [
        { path: '/a2a/auto', body: rpcBody('ControlSession', { action: 'release', id: held.id }) },
        { path: '/a2a/auto', body: rpcBody('UpdateTask', { id: held.id, status: 'done', text: 'forged' }) },
        { path: `/a2a/auto/tasks/${encodeURIComponent(held.id)}:release`, body: '{}' },
        { path: `/a2a/auto/tasks/${encodeURIComponent(held.id)}:update`, body: JSON.stringify({ status: 'done', text: 'forged' }) },
        {
          path: '/a2a',
          body: rpcBody('CreateSchedule', { recipients: ['box/auto'], prompt: 'x', at: new Date(Date.now() + 60_000).toISOString() }),
        },
        { path: '/dashboard/api/tasks/release', body: JSON.stringify({ key }) },
      ];
      const variants: Record<string, string>[] = [
        { 'content-type': 'text/plain', origin: 'http://attacker.example' }, // a cross-site form or no-cors fetch
        { 'content-type': 'text/plain', 'sec-fetch-site': 'cross-site' }, // a browser that sends no Origin
        { ...JSON_HEADERS, host: 'attacker.example', 'x-shrooms-dashboard': '1' }, // DNS rebinding
        { ...JSON_HEADERS, origin: 'http://attacker.example', 'x-shrooms-dashboard': '1' },
      ];
      for (const a of attempts)
        for (const h of variants) {
          const res = await local(a.path, { method: 'POST', headers: h, body: a.body });
          expect(res.text, `${a.path} ${JSON.stringify(h)}`).toContain('CROSS_SITE_REFUSED');
        }
      for (const path of [
        '/agents',
        '/a2a/auto/.well-known/agent-card.json',
        `/a2a/auto/tasks/${encodeURIComponent(held.id)}`,
        '/dashboard/api/overview',
      ])
        expect((await local(path, { headers: { host: 'attacker.example:80' } })).status, path).toBe(403);
      const after = await task('auto', held.id);
      expect(after.status.state).toBe('TASK_STATE_SUBMITTED');
      expect(after.metadata['shrooms/held']).toBe(true);
      expect((await ownerRpc('-', 'ListSchedules', { state: 'all' })).result.total ?? 0).toBe(0);
    });
  });

  describe('claims the gateway does not believe', () => {
    it('a forged shrooms/schedule does not skip the hold', async () => {
      const at = new Date().toISOString();
      const t = (
        await rpcFrom(
          laptop,
          'auto',
          'SendMessage',
          msg(`fake-${Date.now()}`, 'run me', {}, { 'shrooms/from': 'laptop/agent', 'shrooms/schedule': 'fake', 'shrooms/occurrence': at }),
        )
      ).result.task;
      expect(t.metadata['shrooms/held']).toBe(true);
      expect(t.metadata['shrooms/schedule']).toBeUndefined();
    });

    it("a device cannot send a schedule's occurrence before the scheduler: refused, the scheduler's own send is the task", async () => {
      // The laptop schedules a task on box/auto a few seconds ahead, then sends its occurrence first,
      // exactly as the scheduler will (its id, prompt and metadata, while the record stands at it).
      const at = new Date(Date.now() + 4000).toISOString();
      const s = (await rpcFrom(laptop, '', 'CreateSchedule', { recipients: ['box/auto'], prompt: 'who asked?', at })).result.schedule;
      const id = occurrenceMessageId(s.id, s.next.at);
      const squat = await rpcFrom(
        laptop,
        'auto',
        'SendMessage',
        msg(id, 'who asked?', {}, { 'shrooms/schedule': s.id, 'shrooms/occurrence': s.next.at }),
      );
      expect(squat.error?.data?.[0]).toMatchObject({
        reason: 'ACTION_FORBIDDEN',
        metadata: { action: 'send_scheduled', device: 'laptop.home' },
      });
      // The scheduler's send is the task, asked by its machine for the laptop's schedule.
      const t = await until('auto', `auto:${id}`, (x) => x.metadata['shrooms/schedule'] === s.id);
      expect(t.metadata).toMatchObject({ 'shrooms/device': 'box', 'shrooms/occurrence': s.next.at });
      expect(t.metadata['shrooms/scheduled_by']).toContain('laptop.home');
    });

    it('a blank parent does not reset the depth: the claimed session’s current task is the parent', async () => {
      // laptop's session `worker` works on a task of depth 2 (its bridge's signal and ledger entry).
      const kv = await new Kvm(admin).open(BUCKETS.tasks);
      const parent = {
        v: 1,
        events: [],
        task: {
          id: 'worker:w-1',
          contextId: 'c',
          status: { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() },
          metadata: { 'shrooms/depth': 2, 'shrooms/chain': ['box/x', 'box/y'] },
        },
      };
      await kv.put(keys.task('laptop', 'worker', 'w-1'), JSON.stringify(parent));
      const signals = await new Kvm(admin).open(BUCKETS.signals);
      const signal = {
        machine: 'laptop',
        session: 'worker',
        harness: 'claude',
        state: 'working',
        task: 'worker:w-1',
        at: new Date().toISOString(),
        ttlMs: 60_000,
      };
      await signals.put(keys.signal('laptop', 'worker'), JSON.stringify(signal));
      for (const blank of [undefined, '', '  ']) {
        const md = { 'shrooms/from': 'laptop/worker', ...(blank === undefined ? {} : { 'shrooms/parent': blank }) };
        const t = (await rpcFrom(laptop, 'deep', 'SendMessage', msg(`d-${JSON.stringify(blank)}`, 'go on', {}, md))).result.task;
        expect(t.metadata['shrooms/depth'], JSON.stringify(blank)).toBe(3);
        expect(t.metadata['shrooms/parent']).toBe('laptop/worker:w-1');
      }
      // One deeper is refused, blank parent or not.
      parent.task.metadata['shrooms/depth'] = 3;
      await kv.put(keys.task('laptop', 'worker', 'w-1'), JSON.stringify(parent));
      const deep = await rpcFrom(
        laptop,
        'deep',
        'SendMessage',
        msg('d-deeper', 'and on', {}, { 'shrooms/from': 'laptop/worker', 'shrooms/parent': '' }),
      );
      expect(deep.error.code).toBe(-32051);
      // Another device may not name laptop's task as its parent.
      const foreign = await rpcFrom(
        pi5,
        'deep',
        'SendMessage',
        msg('d-pi5', 'hi', {}, { 'shrooms/from': 'pi5/x', 'shrooms/parent': 'laptop/worker:w-1' }),
      );
      expect(foreign.error.code).toBe(-32067);
    });

    it('rotating the claimed shrooms/from does not reset the agent budget', async () => {
      const codes: number[] = [];
      for (let i = 1; i <= 4; i++) {
        const r = await rpcFrom(pi5, 'target', 'SendMessage', msg(`rot-${i}`, `task ${i}`, {}, { 'shrooms/from': `pi5/claim-${i}` }));
        codes.push(r.error?.code ?? 0);
      }
      expect(codes).toEqual([0, 0, 0, -32059]);
    });
  });

  describe('NATS, as the mesh runs it', () => {
    it('the ledger and signal field refuse a rollup or purge from a session credential, and keep every message', async () => {
      const jsm = await jetstreamManager(admin);
      const login = auth.sessionLogin('target');
      const bridge = await connect({
        servers: mesh.nats.url,
        user: login.NATS_USER,
        pass: login.NATS_PASS,
        inboxPrefix: '_INBOX_bridge.box.target',
      });
      try {
        for (const bucket of [BUCKETS.tasks, BUCKETS.signals]) {
          const info = await jsm.streams.info(`KV_${bucket}`);
          expect(info.config.allow_rollup_hdrs, bucket).toBe(false);
          expect(info.config.deny_purge, bucket).toBe(true);
          const before = info.state.messages;
          const h = natsHeaders();
          h.set('Nats-Rollup', 'all');
          const own = bucket === BUCKETS.tasks ? keys.task('box', 'target', 'rollup') : keys.signal('box', 'target');
          const reply = await bridge.request(kvSubject(bucket, own), '{}', { headers: h, timeout: 5000 });
          expect(reply.json<{ error?: { description?: string } }>().error?.description).toMatch(/rollup/i);
          await expect(bridge.request(`$JS.API.STREAM.PURGE.KV_${bucket}`, '{}', { timeout: 5000 })).rejects.toThrow(
            /Permissions Violation/,
          );
          expect((await jsm.streams.info(`KV_${bucket}`)).state.messages, bucket).toBeGreaterThanOrEqual(before);
        }
        await expect(
          bridge.request(`$JS.API.STREAM.INFO.KV_${BUCKETS.tasks}`, JSON.stringify({ subjects_filter: '>' }), { timeout: 5000 }),
        ).rejects.toThrow(/Permissions Violation/);
        expect(await task('target', 'target:b-1')).toBeDefined();
      } finally {
        await bridge.close();
      }
    });
  });
});
