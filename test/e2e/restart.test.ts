/**
 * Kill -9 of the gateway and the bridge while tasks are queued, working and finished: after a
 * restart every task is still there, unchanged, and the queue resumes in order (spec §5).
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { connect } from '@nats-io/transport-node';
import { Ledger, SignalField, intake } from '@shrooms/ledger';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, idleSignal, rpc, startMesh, type Mesh } from '@shrooms/testing';

let mesh: Mesh;
beforeAll(async () => {
  mesh = await startMesh({ sessions: [{ name: 'demo' }, { name: 'work', env: { ECHO_DELAY_MS: '600000' } }] });
});
afterAll(async () => {
  await mesh?.stop();
});

/** A signal as a bridge of this mesh writes it (its renewal time and ttl are the field's). */
const signalOf = (session: string) => idleSignal(mesh.machine, session);

const msg = (id: string, text: string, taskId?: string) => ({
  message: { messageId: id, role: 'ROLE_USER', parts: [{ text }], ...(taskId ? { taskId } : {}) },
});

it('keeps every task and resumes the queue in order after kill -9 of gateway and bridge', async () => {
  const demo = `${mesh.gatewayUrl}/a2a/demo`;
  const work = `${mesh.gatewayUrl}/a2a/work`;
  const finished = (await rpc(demo, 'SendMessage', msg('fin', 'finished before the crash'))).result.task;
  expect(finished.status.state).toBe('TASK_STATE_COMPLETED');
  const ids: string[] = [];
  for (const n of [1, 2, 3]) {
    const r = await rpc(work, 'SendMessage', { ...msg(`q${n}`, `job ${n}`), configuration: { returnImmediately: true } });
    ids.push(r.result.task.id);
  }
  await eventually(async () => (await rpc(work, 'GetTask', { id: ids[0] })).result.status.state === 'TASK_STATE_WORKING');
  const before = await rpc(work, 'ListTasks', { pageSize: 10, includeArtifacts: true });
  expect(before.result.tasks.map((t: any) => t.status.state)).toEqual([
    'TASK_STATE_SUBMITTED',
    'TASK_STATE_SUBMITTED',
    'TASK_STATE_WORKING',
  ]);
  expect(before.result.tasks[0].metadata['shrooms/queued']).toBe(true);

  await mesh.gateway.kill();
  await mesh.bridges.get('work')!.kill();
  await mesh.startGateway();

  // While the bridge is down, the gateway still answers from the ledger, unchanged.
  expect((await rpc(demo, 'GetTask', { id: finished.id })).result).toEqual(finished);
  const during = await rpc(work, 'ListTasks', { pageSize: 10, includeArtifacts: true });
  expect(during.result.tasks).toEqual(before.result.tasks);
  // A task sent while the bridge is down waits in the ledger.
  const late = (await rpc(work, 'SendMessage', { ...msg('q4', 'job 4'), configuration: { returnImmediately: true } })).result.task;
  expect(late.status.state).toBe('TASK_STATE_SUBMITTED');
  ids.push(late.id);

  // The bridge comes back (now a quick worker): the working task is delivered again, then the queue in order.
  await mesh.startBridge('work', 'echo', { ECHO_DELAY_MS: '50' });
  const done = await eventually(async () => {
    const all = await Promise.all(ids.map(async (id) => (await rpc(work, 'GetTask', { id })).result));
    return all.every((t) => t.status.state === 'TASK_STATE_COMPLETED') ? all : undefined;
  }, 60_000);
  const at = done.map((t) => Date.parse(t.status.timestamp));
  expect([...at].sort((a, b) => a - b)).toEqual(at);
  expect(done[0].metadata['shrooms/redeliveries']).toBe(1);
  expect(done.map((t) => t.artifacts[0].parts[0].text)).toEqual(['job 1', 'job 2', 'job 3', 'job 4']);
});

it('shows every state exactly once across a cut stream and SubscribeToTask', async () => {
  const slowUrl = `${mesh.gatewayUrl}/a2a/work`;
  // Occupy the worker so the next task waits in the queue, then stream it.
  await mesh.bridges.get('work')!.stop();
  await mesh.startBridge('work', 'echo', { ECHO_DELAY_MS: '1500' });
  await rpc(slowUrl, 'SendMessage', { ...msg('s0', 'keeps the worker busy'), configuration: { returnImmediately: true } });
  const seen: string[] = [];
  const ctrl = new AbortController();
  const res = await fetch(slowUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: msg('s1', 'stream then cut') }),
    signal: ctrl.signal,
  });
  const reader = res.body!.getReader();
  let buf = '';
  let taskId = '';
  while (!seen.includes('TASK_STATE_WORKING')) {
    const { value } = await reader.read();
    buf += new TextDecoder().decode(value);
    for (const frame of buf.split('\n\n').slice(0, -1)) {
      const data = frame.split('\n').find((l) => l.startsWith('data: '));
      if (!data) continue;
      const r = JSON.parse(data.slice(6)).result;
      const st = r.task?.status ?? r.statusUpdate?.status;
      taskId = r.task?.id ?? r.statusUpdate?.taskId ?? taskId;
      if (st && st.state !== seen[seen.length - 1]) seen.push(st.state);
    }
    buf = buf.slice(buf.lastIndexOf('\n\n') + 2);
  }
  ctrl.abort();
  const again = await fetch(slowUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: taskId } }),
  });
  const text = await again.text();
  const states = text
    .split('\n\n')
    .map((f) => f.split('\n').find((l) => l.startsWith('data: ')))
    .filter((d): d is string => !!d)
    .map((d) => JSON.parse(d.slice(6)).result)
    .map((r) => (r.task?.status ?? r.statusUpdate?.status)?.state as string | undefined)
    .filter((s): s is string => s !== undefined);
  // The resumed stream starts with the task as it stands (the state already seen), then what follows.
  expect(states[0]).toBe(seen[seen.length - 1]);
  const all = [...seen, ...states.slice(1)];
  expect(all).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
});

it('takes up a task stored WORKING that its bridge never started', async () => {
  // What the bridge finds when its create-and-start timed out while a stream leader was elected,
  // yet was stored (the gateway then acknowledged it): a WORKING task of its session that no turn
  // runs. Written here by another connection, it reaches the bridge as such a change does.
  const nc = await connect({ servers: mesh.nats.url });
  try {
    const ledger = await Ledger.open(nc);
    const message = { messageId: 'orphan', role: 'ROLE_USER' as const, parts: [{ text: 'run me anyway' }] };
    const req = { machine: mesh.machine, session: 'demo', message, metadata: {}, origin: { device: mesh.machine } };
    const r = await intake(ledger, req, { queued: false, start: true });
    expect(r.stored.entry.task.status.state).toBe('TASK_STATE_WORKING');
    const demo = `${mesh.gatewayUrl}/a2a/demo`;
    const done = await eventually(async () => {
      const t = (await rpc(demo, 'GetTask', { id: r.stored.entry.task.id })).result;
      return t.status.state === 'TASK_STATE_COMPLETED' ? t : undefined;
    }, 30_000);
    expect(done.artifacts[0].parts[0].text).toBe('run me anyway');
    expect(mesh.bridges.get('demo')!.output()).toMatch(/taking up a task stored WORKING/);
  } finally {
    await nc.close();
  }
});

it('refuses a second bridge for a session that has one, and the first keeps taking its tasks', async () => {
  // (The first case above starts a bridge again after kill -9 of the last one: that is let through.)
  await expect(mesh.startBridge('demo')).rejects.toThrow(/\/demo already has a bridge \(pid \d+ on [^)]+\): two would both take its tasks/);
  const demo = `${mesh.gatewayUrl}/a2a/demo`;
  const task = (await rpc(demo, 'SendMessage', msg('after-second', 'one bridge answers'))).result.task;
  expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  expect(task.artifacts.map((a: any) => a.parts[0].text)).toEqual(['one bridge answers']);
});

it('starts a second bridge with --standby: it waits, then takes the session over when the first stops', async () => {
  const first = await mesh.startBridge('relay', 'echo', { ECHO_DELAY_MS: '600000' });
  const before = mesh.services.length;
  const second = mesh.startBridge('relay', 'echo', {}, ['--standby']);
  const standby = await eventually(() => mesh.services[before]);
  await standby.waitFor(/relay already has a bridge \(pid \d+ on [^)]+\): standing by/, 60_000);
  // The first takes the tasks meanwhile: one works there (for ten minutes), one waits in the queue.
  const relay = `${mesh.gatewayUrl}/a2a/relay`;
  const send = async (id: string) =>
    (await rpc(relay, 'SendMessage', { ...msg(id, `${id} done once`), configuration: { returnImmediately: true } })).result.task.id;
  const working = await send('relay-1');
  await eventually(async () => (await rpc(relay, 'GetTask', { id: working })).result.status.state === 'TASK_STATE_WORKING');
  const queued = await send('relay-2');
  expect(standby.output()).not.toMatch(/bridge ready/);
  await first.stop();
  await second;
  expect(standby.output()).toMatch(/relay is free: this bridge takes it over/);
  // The standby (a quick worker) delivers the task the first left working, then the queue.
  for (const [id, text] of [
    [working, 'relay-1 done once'],
    [queued, 'relay-2 done once'],
  ]) {
    const task = await eventually(async () => {
      const t = (await rpc(relay, 'GetTask', { id })).result;
      return t.status.state === 'TASK_STATE_COMPLETED' ? t : undefined;
    }, 60_000);
    expect(task.artifacts.map((a: any) => a.parts[0].text)).toEqual([text]);
  }
});

it('lets exactly one of two bridges started at the same moment for a session serve it', async () => {
  // The session looks served from another host; both bridges read that and watch it for a renewal.
  // Withdrawn while both watch, it is gone for both within one look (250 ms) of each other: both
  // decide to start, and only the claim of one (compare-and-set on the revision read) is written.
  const nc = await connect({ servers: mesh.nats.url });
  try {
    const signals = await SignalField.open(nc);
    const elsewhere = { host: 'elsewhere', pid: 4242 };
    await signals.renew({ ...signalOf('twin'), instance: elsewhere });
    const before = mesh.services.length;
    const starts = Promise.allSettled([mesh.startBridge('twin'), mesh.startBridge('twin')]);
    const both = await eventually(() => (mesh.services.length === before + 2 ? mesh.services.slice(before) : undefined));
    await Promise.all(both.map((b) => b.waitFor(/waiting up to \d+ ms for a renewal/, 60_000)));
    await signals.withdraw(mesh.machine, 'twin');
    const settled = await starts;
    expect(settled.map((s) => s.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult;
    expect(String(refused.reason)).toMatch(/\/twin already has a bridge \(pid \d+ on [^)]+\): two would both take its tasks/);
  } finally {
    await nc.close();
  }
  const twin = `${mesh.gatewayUrl}/a2a/twin`;
  const task = (await rpc(twin, 'SendMessage', msg('twin-1', 'one bridge answers'))).result.task;
  expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  // Two bridges would each have taken it and added an artifact.
  expect(task.artifacts.map((a: any) => a.parts[0].text)).toEqual(['one bridge answers']);
});

it('takes its claim back when its start fails after it: the session is not left looking served', async () => {
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const port = (busy.address() as AddressInfo).port;
  const nc = await connect({ servers: mesh.nats.url });
  try {
    // Its tools' port is taken: the start fails after the session was claimed.
    await expect(mesh.startBridge('unlucky', 'echo', { BRIDGE_MCP_PORT: String(port) })).rejects.toThrow(/EADDRINUSE/);
    const signals = await SignalField.open(nc);
    expect((await signals.read(mesh.machine, 'unlucky')).signal).toBeNull();
    await mesh.startBridge('unlucky');
    expect((await signals.read(mesh.machine, 'unlucky')).signal?.state).toBeDefined();
  } finally {
    busy.close();
    await nc.close();
  }
});
