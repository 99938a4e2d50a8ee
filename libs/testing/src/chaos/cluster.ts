/**
 * A 3-node nats-server cluster with JetStream for chaos tests, in the flag form of nats-server 2.9:
 * loopback only, free ports, each node its own data folder (kept across kill/restart, removed on
 * stop). Mirrors the cluster and jetstream blocks of deploy/nats/nats.conf without its users, so
 * services connect as in the plain test mesh.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { natsServerBinary, type NatsServerHandle } from '../nats-server.js';
import { freePort } from '../processes.js';
import { tempDir } from '../temp.js';

export interface ClusterNode {
  name: string;
  url: string;
  monitorUrl: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGKILL; the data folder stays. */
  kill(): Promise<void>;
  /** Starts the node again on the same ports and data; resolves when it reports healthy. */
  restart(): Promise<void>;
}

export interface NatsCluster {
  nodes: ClusterNode[];
  /** Every node's client URL, comma-separated (what NATS_URL takes). */
  url: string;
  /** A handle for `startMesh({ nats })`: the mesh connects to all nodes and leaves stopping to us. */
  handle: NatsServerHandle;
  /** The server name of the leader of `stream` (JetStream API via any live node's monitor). */
  streamLeader(stream: string): Promise<string | undefined>;
  node(name: string): ClusterNode;
  stop(): Promise<void>;
}

async function healthy(monitorUrl: string): Promise<boolean> {
  return fetch(`${monitorUrl}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
    (r) => r.ok,
    () => false,
  );
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms`);
}

export async function startNatsCluster(opts: { size?: number; name?: string; timeoutMs?: number } = {}): Promise<NatsCluster> {
  const size = opts.size ?? 3;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const clusterName = opts.name ?? 'chaos';
  const temp = await tempDir('shrooms-cluster');
  const dir = temp.path;
  const specs: { name: string; port: number; monitor: number; route: number }[] = [];
  for (let i = 1; i <= size; i++) specs.push({ name: `n${i}`, port: await freePort(), monitor: await freePort(), route: await freePort() });
  const routes = specs.map((s) => `nats://127.0.0.1:${s.route}`).join(',');

  const nodes: ClusterNode[] = specs.map((s) => {
    let child: ChildProcess | undefined;
    let stderr = '';
    const monitorUrl = `http://127.0.0.1:${s.monitor}`;
    const launch = () => {
      stderr = '';
      const args = [
        '-a',
        '127.0.0.1',
        '-p',
        String(s.port),
        '-m',
        String(s.monitor),
        '-n',
        s.name,
        '-js',
        '-sd',
        join(dir, s.name),
        '--cluster_name',
        clusterName,
        '--cluster',
        `nats://127.0.0.1:${s.route}`,
        '--routes',
        routes,
      ];
      const c = spawn(natsServerBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
      c.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
      c.once('error', () => {});
      child = c;
    };
    const exited = () => !child || child.exitCode !== null || child.signalCode !== null;
    const waitExit = (ms: number) =>
      new Promise<void>((resolve) => {
        if (exited()) return resolve();
        // Past `ms` a SIGKILL, and still the exit awaited: a server writing as its folder goes
        // fails the removal.
        const t = setTimeout(() => child?.kill('SIGKILL'), ms);
        child!.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
      });
    const node: ClusterNode & { launch(): void; waitExit(ms: number): Promise<void>; stderr(): string } = {
      name: s.name,
      url: `nats://127.0.0.1:${s.port}`,
      monitorUrl,
      get pid() {
        return child?.pid;
      },
      get running() {
        return !exited();
      },
      launch,
      waitExit,
      stderr: () => stderr,
      async kill() {
        child?.kill('SIGKILL');
        await waitExit(5_000);
      },
      async restart() {
        if (!exited()) {
          child!.kill('SIGTERM');
          await waitExit(10_000);
        }
        launch();
        await until(() => healthy(monitorUrl), timeoutMs, `nats node ${s.name} (${stderr.slice(-500)})`);
      },
    };
    return node;
  });

  const internal = nodes as (ClusterNode & { launch(): void; waitExit(ms: number): Promise<void>; stderr(): string })[];
  for (const n of internal) n.launch();
  try {
    // Healthy on 2.9 means JetStream is current with the meta leader, so streams can be created.
    await until(
      async () => (await Promise.all(nodes.map((n) => healthy(n.monitorUrl)))).every(Boolean),
      timeoutMs,
      `nats cluster (${internal.map((n) => n.stderr().slice(-300)).join(' | ')})`,
    );
  } catch (err) {
    for (const n of internal) await n.kill();
    await temp.remove();
    throw err;
  }
  const url = nodes.map((n) => n.url).join(',');

  const cluster: NatsCluster = {
    nodes,
    url,
    handle: {
      url,
      kind: 'local',
      stop: async () => {},
      kill: () => {},
      restart: async () => {},
    },
    node(name) {
      const n = nodes.find((x) => x.name === name);
      if (!n) throw new Error(`no node ${name}`);
      return n;
    },
    async streamLeader(stream) {
      for (const n of nodes.filter((x) => x.running)) {
        try {
          const r = await fetch(`${n.monitorUrl}/jsz?accounts=true&streams=true`, { signal: AbortSignal.timeout(2_000) });
          const j = (await r.json()) as { account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[] };
          for (const a of j.account_details ?? [])
            for (const s of a.stream_detail ?? []) if (s.name === stream && s.cluster?.leader) return s.cluster.leader;
        } catch {
          // try the next node
        }
      }
      return undefined;
    },
    async stop() {
      for (const n of internal) {
        try {
          if (n.running && n.pid) process.kill(n.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      await Promise.all(internal.map((n) => n.waitExit(10_000)));
      await temp.remove();
    },
  };
  return cluster;
}
