/**
 * The deployment's shape on one machine: a 3-node nats-server cluster started from
 * deploy/nats/nats.conf (its permissions included; only the listen ports moved to free loopback
 * ports and JetStream to temp folders), the R3 ledger (SHROOMS_REPLICAS=3), and the services as
 * their own processes with their deploy users: gateway, guard ×2, scheduler ×2 and an echo bridge.
 * Tasks flow; the node leading the ledger's stream is killed (SIGKILL); tasks keep completing and
 * every service still answers `$SRV.INFO`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { BUCKETS, SERVICE_NAMES } from '@shrooms/protocol';
import { REPO_ROOT, eventually, freePort, runTs, tempDir, type ServiceProcess, type TempDir } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsFromConfig, type NatsCluster, type NatsNode } from '../../scripts/deploy-check/nats-cluster.mjs';

const CLI = 'services/shrooms-agent/src/main.ts';
const MACHINE = 'laptop'; // the machine deploy/nats/permissions.conf was generated for
const SESSION = 'echo';
const LEDGER_STREAM = `KV_${BUCKETS.tasks}`;

/** The passwords compose gives the NATS nodes and the services (deploy/compose/.env.example). */
function examplePasswords(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(join(REPO_ROOT, 'deploy/compose/.env.example'), 'utf8').split('\n')) {
    const m = /^(NATS_[A-Z0-9_]+_PASSWORD)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/**
 * How each service starts: through the CLI when it has the command, else its own main.ts (as the
 * CLI would run it), else not at all — said in the test output.
 */
function launcher(service: 'guard' | 'scheduler'): { script: string; args: string[] } | undefined {
  const commands = readFileSync(join(REPO_ROOT, 'services/shrooms-agent/src/commands/index.ts'), 'utf8');
  if (new RegExp(`^\\s*${service}:`, 'm').test(commands)) return { script: CLI, args: [service] };
  const main = `services/${service}/src/main.ts`;
  if (existsSync(join(REPO_ROOT, main))) {
    console.warn(`cluster test: the CLI has no \`${service}\` command yet; running ${main} directly`);
    return { script: main, args: [] };
  }
  console.warn(`cluster test: no ${service} yet (no CLI command, no ${main}); running without it`);
  return undefined;
}

const passwords = examplePasswords();
let cluster: NatsCluster;
let temp: TempDir | undefined;
let tmp: string;
let gatewayUrl: string;
let admin: NatsConnection;
const procs: ServiceProcess[] = [];
const expected: string[] = [];

function start(name: string, script: string, args: string[], env: Record<string, string>, ready: RegExp): Promise<string> {
  const p = runTs(script, args, env);
  procs.push(p);
  return p.waitFor(ready, 90_000).catch((err: Error) => {
    throw new Error(`${name} did not start: ${err.message}\n${p.output().slice(-2000)}`);
  });
}

async function send(text: string, messageId: string): Promise<any> {
  const res = await fetch(`${gatewayUrl}/a2a/${SESSION}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: messageId,
      method: 'SendMessage',
      params: { message: { messageId, role: 'ROLE_USER', parts: [{ text }] } },
    }),
  });
  return res.json();
}

/**
 * Sends until the task is completed. A resend of the same message is the same task, never a second.
 * A send that takes long is reported (not asserted: no wall-clock assertions), so a stall during a
 * failover shows in the output.
 */
async function completes(text: string, messageId: string): Promise<any> {
  let last: unknown;
  return eventually(
    async () => {
      const started = Date.now();
      last = await send(text, messageId).catch((err: Error) => ({ error: err.message }));
      const tookMs = Date.now() - started;
      if (tookMs > 10_000)
        console.warn(`cluster test: SendMessage ${messageId} took ${Math.round(tookMs / 1000)} s (${JSON.stringify(last).slice(0, 160)})`);
      const task = (last as any)?.result?.task;
      return task?.status?.state === 'TASK_STATE_COMPLETED' ? task : undefined;
    },
    180_000,
    250,
  ).catch(() => {
    throw new Error(`task ${messageId} did not complete; last answer: ${JSON.stringify(last)}`);
  });
}

async function getTask(id: string): Promise<any> {
  const res = await fetch(`${gatewayUrl}/a2a/${SESSION}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }),
  });
  return ((await res.json()) as { result?: any }).result;
}

/** The node whose server leads the ledger's stream, from the monitoring endpoint of a live node. */
async function ledgerLeader(): Promise<
  { leader: NatsNode; replicas: { name: string; current?: boolean; offline?: boolean }[] } | undefined
> {
  for (const node of cluster.nodes.filter((n) => n.running)) {
    const jsz = (await fetch(`${node.monitorUrl}/jsz?accounts=true&streams=true`).then(
      (r) => r.json(),
      () => undefined,
    )) as { account_details?: any[] } | undefined;
    for (const account of jsz?.account_details ?? []) {
      const stream = (account.stream_detail ?? []).find((s: any) => s.name === LEDGER_STREAM);
      const leaderName = stream?.cluster?.leader;
      const leader = cluster.nodes.find((n) => n.name === leaderName);
      if (leader) return { leader, replicas: stream.cluster.replicas ?? [] };
    }
  }
  return undefined;
}

/** Every reply to one `$SRV.INFO` request, within a second of quiet. */
async function serviceInfos(): Promise<{ name: string; id: string }[]> {
  const replies = await admin.requestMany('$SRV.INFO', '', { strategy: 'stall', stall: 1000, maxWait: 5000 } as any);
  const out: { name: string; id: string }[] = [];
  for await (const m of replies) out.push(m.json<{ name: string; id: string }>());
  return out;
}

beforeAll(async () => {
  temp = await tempDir('shrooms-cluster-e2e');
  tmp = temp.path;
  cluster = await startNatsFromConfig({ configFile: join(REPO_ROOT, 'deploy/nats/nats.conf'), nodes: 3, env: passwords, freePort });
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  const guard = launcher('guard');
  const scheduler = launcher('scheduler');
  const base = { NATS_URL: cluster.url, SHROOMS_MACHINE: MACHINE, SHROOMS_REPLICAS: '3', LOG_LEVEL: 'info' };
  const as = (user: string, password: string) => ({ NATS_USER: user, NATS_PASS: passwords[password]! });

  // One after another: the first of each kind creates its R3 buckets, the next binds to them.
  // (Two replicas creating the same R3 bucket at once on a fresh cluster can time out; see the
  // operators' notes on start order.)
  await start(
    'gateway',
    CLI,
    ['gateway'],
    { ...base, ...as('gateway', 'NATS_GATEWAY_PASSWORD'), GATEWAY_PORT: String(port), GATEWAY_GUARD: guard ? 'service' : 'off' },
    /gateway listening/,
  );
  expected.push(SERVICE_NAMES.gateway);
  for (const i of [1, 2]) {
    if (guard) {
      await start(`guard-${i}`, guard.script, guard.args, { ...base, ...as('guard', 'NATS_GUARD_PASSWORD') }, /guard ready/);
      expected.push(SERVICE_NAMES.guard);
    }
    if (scheduler) {
      await start(
        `scheduler-${i}`,
        scheduler.script,
        scheduler.args,
        {
          ...base,
          ...as('scheduler', 'NATS_SCHEDULER_PASSWORD'),
          SHROOMS_GATEWAY_URL: gatewayUrl,
          SCHEDULER_REPLICA_ID: `scheduler-${i}`,
        },
        /scheduler ready/,
      );
      expected.push(SERVICE_NAMES.scheduler);
    }
  }
  // The bridge of machine laptop with its own least-privilege user (it binds to the ledger only).
  await mkdir(join(tmp, SESSION), { recursive: true });
  await start(
    'bridge',
    CLI,
    ['bridge', '--harness', 'echo', '--session', SESSION, '--cwd', join(tmp, SESSION)],
    { ...base, ...as('bridge', 'NATS_BRIDGE_PASSWORD'), SHROOMS_GATEWAY_URL: gatewayUrl, BRIDGE_STATE_DIR: join(tmp, 'state') },
    /bridge ready/,
  );
  expected.push(SERVICE_NAMES.bridge);
  admin = await connect({
    servers: cluster.url.split(','),
    user: 'admin',
    pass: passwords.NATS_ADMIN_PASSWORD,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
  });
});

afterAll(async () => {
  try {
    await admin?.close().catch(() => {});
    await Promise.all(procs.map((p) => p.stop()));
    await cluster?.stop();
  } finally {
    await temp?.remove();
  }
});

describe('the mesh on a 3-node NATS cluster from the deploy config', () => {
  const before: string[] = [];

  it('completes tasks with the ledger replicated on all three nodes', async () => {
    for (let i = 0; i < 5; i++) {
      const task = await completes(`before ${i}`, `before-${i}`);
      expect(task.artifacts?.[0]?.parts?.[0]?.text ?? task.status.message.parts[0].text).toBe(`before ${i}`);
      before.push(task.id);
    }
    const led = await eventually(ledgerLeader, 20_000, 200);
    expect(led.replicas.length).toBe(2); // the leader plus two followers
  });

  it('keeps completing tasks after the node leading the ledger is killed', async () => {
    const { leader } = await eventually(ledgerLeader, 20_000, 200);
    await leader.kill();
    // Straight on, through the election: a request that fails in the gap is sent again with the
    // same message id (the same task), as an A2A client retries.
    for (let i = 0; i < 5; i++) {
      const task = await completes(`after ${i}`, `after-${i}`);
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    }
    // The ledger has a new leader among the two nodes left, and the killed peer is behind.
    const next = await eventually(
      async () => {
        const l = await ledgerLeader();
        const dead = l?.replicas.find((r) => r.name === leader.name);
        return l && l.leader !== leader && dead && (dead.offline || !dead.current) ? l : undefined;
      },
      60_000,
      250,
    );
    expect(next.leader.name).not.toBe(leader.name);
    // What was finished before the loss is still there: the ledger lost nothing.
    for (const id of before) expect((await getTask(id))?.status?.state).toBe('TASK_STATE_COMPLETED');
  }, 300_000);

  it('has every service answering $SRV.INFO after the failover', async () => {
    const infos = await eventually(
      async () => {
        const found = await serviceInfos();
        const names = found.map((i) => i.name).sort();
        return JSON.stringify(names) === JSON.stringify([...expected].sort()) ? found : undefined;
      },
      30_000,
      500,
    ).catch(async () => {
      throw new Error(
        `$SRV.INFO answered by ${JSON.stringify((await serviceInfos()).map((i) => i.name))}, expected ${JSON.stringify(expected)}`,
      );
    });
    expect(new Set(infos.map((i) => i.id)).size).toBe(expected.length);
  });
});
