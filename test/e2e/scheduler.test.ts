/**
 * The scheduler across processes, over a real nats-server: two scheduler replicas, the gateway and
 * echo sessions, each its own process. With schedules seconds apart (no fake clocks), one replica is
 * killed with SIGKILL and the nats-server restarted while they fire; every occurrence must still
 * produce exactly one task in the ledger — none lost, none doubled — and a canceled schedule must
 * fire no more.
 *
 * The gateway asks the guard for each occurrence, as for any new task.
 *
 * Replica r1 reaches the gateway through a small pass-through proxy: the proxy hands r1's first
 * send to the gateway (the task is in the ledger) and then holds the answer while the test kills r1.
 * That is the worst crash window — sent but not recorded — at a moment the test knows, not by luck.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { BUCKETS, META, type Schedule, type Task, occurrenceMessageId } from '@shrooms/protocol';
import { scheduleClient, type ScheduleClient } from '@shrooms/client';
import { keysNow } from '@shrooms/runtime';
import { compileRule, occurrences } from '@shrooms/scheduler';
import {
  CLI,
  eventually,
  rpc,
  runTs,
  sendsInFlight,
  startMesh,
  startNatsServer,
  type Mesh,
  type NatsServerHandle,
  type ServiceProcess,
} from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let nats: NatsServerHandle;
let mesh: Mesh;
let nc: NatsConnection;
let client: ScheduleClient;
const replicas: ServiceProcess[] = [];
let guard: ServiceProcess;
let proxy: Server;
let proxyUrl: string;
/** Resolves with the task id (`SESSION:MESSAGE-ID`) of r1's first send, once the gateway has taken it. */
let firstProxied: Promise<string>;
/** Sends the proxy has passed on to the gateway and not yet heard back about (r1's, even once r1 is dead). */
let proxying = 0;

function startReplica(id: string, env: Record<string, string> = {}): ServiceProcess {
  const p = runTs(CLI, ['scheduler'], {
    ...mesh.env,
    ...env,
    SCHEDULER_REPLICA_ID: id,
    SHROOMS_GATEWAY_URL: mesh.gatewayUrl,
    SCHEDULER_TICK_MS: '250',
    SCHEDULER_LEASE_MS: '3000',
    SCHEDULER_RESCAN_MS: '2000',
    SCHEDULER_MIN_INTERVAL_MS: '1000',
  });
  replicas.push(p);
  return p;
}

/**
 * Every task in the ledger that a schedule produced, read straight from KV `shrooms_tasks`. Its keys
 * as they stand (`keysNow`): `kv.keys()` follows the schedules' writes and, with them coming faster
 * than it reads, did not end — the test hung to its timeout once in a whole-suite run.
 */
async function ledgerTasks(): Promise<Task[]> {
  const kv = await new Kvm(nc).open(BUCKETS.tasks);
  const out: Task[] = [];
  for (const key of await keysNow(nc, BUCKETS.tasks)) {
    const e = await kv.get(key);
    if (!e || e.operation !== 'PUT' || e.value.length === 0) continue;
    const task = e.json<{ task: Task }>().task;
    if (task.metadata?.[META.schedule] !== undefined) out.push(task);
  }
  return out;
}

const occurrenceTasks = (tasks: Task[], id: string) => tasks.filter((t) => t.metadata?.[META.schedule] === id && !t.id.includes('-re-'));

beforeAll(async () => {
  nats = await startNatsServer();
  // The normal path, guard included: the gateway asks the guard before admitting each occurrence.
  mesh = await startMesh({ nats, sessions: [{ name: 'review' }, { name: 'tests' }], env: { GATEWAY_GUARD: 'service' } });
  guard = runTs('services/guard/src/main.ts', [], mesh.env);
  await guard.waitFor(/guard ready/, 60_000);
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  client = scheduleClient(nc, { timeoutMs: 3000 });
  let tookFirst: (messageId: string) => void;
  firstProxied = new Promise((resolve) => (tookFirst = resolve));
  let held = false;
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      proxying++;
      void fetch(`${mesh.gatewayUrl}${req.url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body,
      })
        .then(async (r) => {
          const text = await r.text();
          if (!held) {
            held = true; // the gateway has it; r1 never hears back
            tookFirst(`${decodeURIComponent(req.url!.split('/').pop()!)}:${JSON.parse(body).params.message.messageId as string}`);
            return;
          }
          res.writeHead(r.status, { 'content-type': 'application/json' }).end(text);
        })
        .finally(() => proxying--);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  // r2 joins in the first test, once r1 has sent.
  await startReplica('r1', { SHROOMS_GATEWAYS: `${mesh.machine}=${proxyUrl}` }).waitFor(/scheduler ready/, 60_000);
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await guard?.stop();
  proxy?.closeAllConnections();
  proxy?.close();
  await nc?.close();
  await mesh?.stop();
  await nats?.stop();
});

describe('scheduler', () => {
  it('fires every occurrence exactly once through kill -9 of a replica and a nats-server restart', async () => {
    const m = mesh.machine;
    const origin = { device: 'laptop', from: 'laptop/webapp' };
    const inSeconds = (s: number) => new Date(Math.ceil(Date.now() / 1000) * 1000 + s * 1000).toISOString();

    const repeating = (
      await client.create({
        recipients: [`${m}/review`, `${m}/tests`],
        prompt: 'run the suite',
        at: inSeconds(3),
        repeat: 'every 2s;count=12',
        origin,
      })
    ).schedule;
    const once = await Promise.all(
      [4, 9, 14].map(
        async (s, i) =>
          (
            await client.create({
              recipients: [`${m}/review`],
              prompt: `one-shot ${i}`,
              at: inSeconds(s),
              origin,
              ...(i === 0 ? { replyTo: `${m}/tests` } : {}),
            })
          ).schedule,
      ),
    );
    const toCancel = (
      await client.create({ recipients: [`${m}/tests`], prompt: 'until canceled', at: inSeconds(3), repeat: 'every 2s', origin })
    ).schedule;

    // The moment the gateway has taken r1's first send, r2 joins and r1 dies (kill -9) before it can
    // record it: r2 must resend it after r1's lease runs out, as the same task. r2 starts only now:
    // with both ticking from the start, whichever's tick falls first after the whole second wins
    // every claim, and r1 sent nothing for the test's whole timeout once in a CI run.
    const orphan = await firstProxied;
    await startReplica('r2', { HEALTH_PORT: '0' }).waitFor(/scheduler ready/, 60_000);
    await replicas[0]!.kill();

    // The canceled schedule: cancel it through the service while the others keep firing.
    await eventually(async () => occurrenceTasks(await ledgerTasks(), toCancel.id).length >= 2, 30_000, 200);
    const canceled = await client.cancel({ id: toCancel.id, origin });
    expect(canceled.state).toBe('canceled');

    // NATS goes away and comes back (same data): replicas, gateway and bridges reconnect.
    await nats.restart();
    startReplica('r1-restarted');

    const expected = new Map<string, number>([[repeating.id, 12 * 2], ...once.map((s): [string, number] => [s.id, 1])]);
    await eventually(
      async () => {
        const tasks = await ledgerTasks();
        return [...expected].every(([id, n]) => occurrenceTasks(tasks, id).length >= n);
      },
      90_000,
      500,
    );
    // Every schedule done, and every send any replica began answered (the live replicas' logs; the
    // proxy for dead r1's): a straggling double (a resend after the kill or the restart) is in the
    // ledger by now, before counting.
    await eventually(
      async () => (await client.list({ state: 'all' })).schedules.filter((s) => expected.has(s.id)).every((s) => s.state === 'done'),
      30_000,
      250,
    );
    await eventually(
      () =>
        proxying === 0 &&
        replicas.every((r) => r.child.exitCode !== null || r.child.signalCode !== null || sendsInFlight(r.output()).length === 0),
      30_000,
      100,
    );
    const tasks = await ledgerTasks();

    for (const [id, n] of expected) {
      const mine = occurrenceTasks(tasks, id);
      expect(mine, `tasks of schedule ${id}`).toHaveLength(n);
      // Exactly the occurrences the rule has, each once per recipient, each under its derived message id.
      const s = [repeating, ...once].find((x) => x.id === id)!;
      const want = occurrences(compileRule(s.rule), 100).flatMap((o) =>
        s.recipients.map((r) => `${r.split('/')[1]}:${occurrenceMessageId(id, o.at)}`),
      );
      expect(mine.map((t) => t.id).sort()).toEqual(want.sort());
    }

    // They went through the normal path: the echo session finished each one, and the header shows who scheduled it.
    const sample = occurrenceTasks(tasks, repeating.id)[0]!;
    expect(sample.metadata).toMatchObject({ [META.device]: m, [META.from]: 'laptop/webapp', [META.schedule]: repeating.id });
    // Seconds are shown only when they are not :00 (formatWallTime), so an occurrence on the minute reads 10:17.
    expect(String(sample.metadata?.[META.scheduledBy])).toMatch(
      /^scheduled by laptop \(laptop\/webapp\) for \w{3} \d+ \w{3} \d{4} \d\d:\d\d(:\d\d)? \(UTC\)$/,
    );
    await eventually(
      async () => occurrenceTasks(await ledgerTasks(), repeating.id).every((t) => t.status.state === 'TASK_STATE_COMPLETED'),
      30_000,
      500,
    );

    // The canceled schedule fired nothing after its cancel: every occurrence it produced was due before it.
    const canceledAt = Date.parse(canceled.updatedAt);
    const cancelTasks = occurrenceTasks(tasks, toCancel.id);
    expect(cancelTasks.length).toBeGreaterThanOrEqual(2);
    for (const t of cancelTasks) expect(Date.parse(String(t.metadata?.[META.occurrence]))).toBeLessThanOrEqual(canceledAt);
    const after = (await client.list({ id: toCancel.id, state: 'all' })).schedules[0] as Schedule;
    expect(after).toMatchObject({ state: 'canceled', canceledBy: 'laptop (laptop/webapp)' });

    // The orphaned send is one task, not two, and its schedule moved on past it.
    expect(tasks.filter((t) => t.id === orphan)).toHaveLength(1);

    // The one-shot with replyTo sent its result back to the reply-to session, once.
    await eventually(
      async () =>
        (await ledgerTasks()).filter(
          (t) =>
            t.metadata?.[META.schedule] === once[0]!.id &&
            t.id.startsWith(`tests:${occurrenceMessageId(once[0]!.id, once[0]!.next!.at)}-re-`),
        ).length === 1,
      30_000,
      500,
    );
  });

  it('creates a schedule from an A2A SendMessage carrying shrooms/at, once for a resend', async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3000).toISOString();
    const params = {
      message: { messageId: `a2a-at-${Date.now()}`, role: 'ROLE_USER', parts: [{ text: 'later, please' }], metadata: { [META.at]: at } },
    };
    const first = await rpc(`${mesh.gatewayUrl}/a2a/review`, 'SendMessage', params);
    expect(first.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
    const id = first.result.task.metadata[META.schedule] as string;
    const again = await rpc(`${mesh.gatewayUrl}/a2a/review`, 'SendMessage', params);
    expect(again.result.task.metadata[META.schedule]).toBe(id);
    expect((await client.list({ id, state: 'all' })).total).toBe(1);
    await eventually(async () => occurrenceTasks(await ledgerTasks(), id).length === 1, 30_000, 250);
    const [task] = occurrenceTasks(await ledgerTasks(), id);
    expect(task!.id).toBe(`review:${occurrenceMessageId(id, at)}`);
    expect(task!.metadata?.[META.scheduledBy]).toMatch(new RegExp(`^scheduled by ${mesh.machine} for `));
  });

  it('answers its readiness probe: NATS, JetStream and a write to the schedules bucket', async () => {
    const line = await replicas[1]!.waitFor(/"url":"http:\/\/127\.0\.0\.1:\d+"[^\n]*health server listening/, 5_000);
    const url = /"url":"([^"]+)"/.exec(line)![1]!;
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', checks: { nats: true, jetstream: true, schedules: true } });
  });

  it('lists schedules and refuses to cancel an unknown one through the service', async () => {
    const listed = await client.list({ state: 'all', from: 'laptop/webapp' });
    expect(listed.total).toBeGreaterThanOrEqual(5);
    await expect(client.cancel({ id: 'no-such-schedule', origin: { device: 'laptop' } })).rejects.toMatchObject({
      key: 'SCHEDULE_NOT_FOUND',
    });
  });
});
