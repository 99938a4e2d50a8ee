/**
 * A 3-node nats-server cluster with JetStream for chaos tests, in the flag form of nats-server 2.9:
 * loopback only, free ports, each node its own data folder (kept across kill/restart, removed on
 * stop). Mirrors the cluster and jetstream blocks of deploy/nats/nats.conf without its users, so
 * services connect as in the plain test mesh.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { natsServerBinary, type NatsServerHandle } from '../nats-server.js';
import { freePort } from '../ports.js';
import { tempDir } from '../temp.js';

export interface ClusterNode {
  name: string;
  url: string;
  monitorUrl: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** The end of the node's log since it was last started (nats-server logs to stderr). */
  stderr(): string;
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

/** Polls `check` until true; `what` names what failed, read when it has (its output by then). */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what()} not ready after ${timeoutMs} ms`);
}

/** How much of each node's log is kept (the end). */
const LOG_TAIL = 64 * 1024;

/** A cluster start tried this many times: a port picked free can be taken before its node binds it. */
const START_ATTEMPTS = 3;

/** A node as the cluster drives it: launched, waited for, and its output and exit kept. */
type InternalNode = ClusterNode & { launch(): void; waitExit(ms: number): Promise<void>; exit(): string };

/** `size` nodes on ports free just now, their data under `dir`; not launched. */
async function makeNodes(size: number, dir: string, clusterName: string, timeoutMs: number): Promise<InternalNode[]> {
  const specs: { name: string; port: number; monitor: number; route: number }[] = [];
  for (let i = 1; i <= size; i++) specs.push({ name: `n${i}`, port: await freePort(), monitor: await freePort(), route: await freePort() });
  const routes = specs.map((s) => `nats://127.0.0.1:${s.route}`).join(',');
  return specs.map((s) => {
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
      c.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-LOG_TAIL)));
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
    const node: InternalNode = {
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
      exit: () => (child?.signalCode ? `killed by ${child.signalCode}` : `exited with ${child?.exitCode ?? 'no process'}`),
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
        await until(
          () => healthy(monitorUrl),
          timeoutMs,
          () => `nats node ${s.name} (${stderr.slice(-500)})`,
        );
      },
    };
    return node;
  });
}

/**
 * Waits until every node is healthy (on 2.9: JetStream current with the meta leader, so streams can
 * be created), or one has exited (its port was taken meanwhile, say), or the time is up.
 */
async function startup(nodes: InternalNode[], timeoutMs: number): Promise<'ready' | 'exited' | 'timeout'> {
  let exited = false;
  try {
    await until(
      async () => {
        exited = nodes.some((n) => !n.running);
        return exited || (await Promise.all(nodes.map((n) => healthy(n.monitorUrl)))).every(Boolean);
      },
      timeoutMs,
      () => 'nats cluster',
    );
  } catch {
    return 'timeout';
  }
  return exited ? 'exited' : 'ready';
}

export async function startNatsCluster(opts: { size?: number; name?: string; timeoutMs?: number } = {}): Promise<NatsCluster> {
  const size = opts.size ?? 3;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const clusterName = opts.name ?? 'chaos';
  const temp = await tempDir('shrooms-cluster');
  let internal: InternalNode[] = [];
  for (let attempt = 1; ; attempt++) {
    internal = await makeNodes(size, join(temp.path, `start-${attempt}`), clusterName, timeoutMs);
    for (const n of internal) n.launch();
    const outcome = await startup(internal, timeoutMs);
    if (outcome === 'ready') break;
    const said = internal.map((n) => `${n.name} ${n.running ? 'running' : n.exit()}: ${n.stderr().slice(-300)}`).join(' | ');
    for (const n of internal) await n.kill();
    if (outcome === 'exited' && attempt < START_ATTEMPTS) {
      process.stderr.write(`nats cluster start ${attempt}: a node exited (${said}); again on other ports\n`);
      continue;
    }
    await temp.remove();
    throw new Error(
      `nats cluster not ready after ${timeoutMs} ms (${outcome === 'exited' ? `a node exited, ${attempt} starts` : 'no node exited'}): ${said}`,
    );
  }
  const nodes: ClusterNode[] = internal;
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
