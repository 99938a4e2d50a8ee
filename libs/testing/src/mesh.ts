/**
 * A whole mesh for cross-process tests: a real nats-server, the gateway, optionally guard and
 * scheduler, and bridges — each its own process started through the `shrooms-agent` CLI, exactly as
 * a person runs them. One shared setup/cleanup for the root test/ suites.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startNatsServer, type NatsServerHandle } from './nats-server.js';
import { freePort } from './ports.js';
import { runTs, type Built, type ServiceProcess } from './processes.js';
import { tempDir } from './temp.js';

export const CLI = 'services/shrooms-agent/src/main.ts';

export interface MeshOptions {
  machine?: string;
  sessions?: { name: string; harness?: 'echo' | 'claude' | 'pi' | 'acp'; env?: Record<string, string> }[];
  guard?: boolean;
  scheduler?: boolean;
  env?: Record<string, string>;
  /** More environment for one service only (its NATS login, when the server has users). */
  serviceEnv?: Partial<Record<'gateway' | 'guard' | 'scheduler', Record<string, string>>>;
  nats?: NatsServerHandle;
  /**
   * Run the compiled CLI as people run it (bundled: services/shrooms-agent/bundle) instead of its
   * sources under tsx; `'unbundled'` from each package's dist/.
   */
  built?: Built;
}

export interface Mesh {
  nats: NatsServerHandle;
  machine: string;
  gatewayUrl: string;
  gatewayPort: number;
  env: Record<string, string>;
  tmp: string;
  gateway: ServiceProcess;
  bridges: Map<string, ServiceProcess>;
  services: ServiceProcess[];
  startGateway(): Promise<ServiceProcess>;
  /** Resolves once the bridge is ready; `args` are more of `shrooms-agent bridge`'s flags. */
  startBridge(name: string, harness?: string, env?: Record<string, string>, args?: string[]): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

export async function startMesh(opts: MeshOptions = {}): Promise<Mesh> {
  const nats = opts.nats ?? (await startNatsServer());
  const temp = await tempDir('shrooms-mesh');
  const tmp = temp.path;
  const machine = opts.machine ?? 'testbox';
  const gatewayPort = await freePort();
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const env: Record<string, string> = {
    NATS_URL: nats.url,
    SHROOMS_MACHINE: machine,
    GATEWAY_PORT: String(gatewayPort),
    SHROOMS_GATEWAY_URL: gatewayUrl,
    GATEWAY_GUARD: opts.guard ? 'service' : 'off',
    LOG_LEVEL: 'info',
    ...opts.env,
  };
  const run = { built: opts.built };
  const services: ServiceProcess[] = [];
  const bridges = new Map<string, ServiceProcess>();
  const mesh: Mesh = {
    nats,
    machine,
    gatewayUrl,
    gatewayPort,
    env,
    tmp,
    gateway: undefined as unknown as ServiceProcess,
    bridges,
    services,
    async startGateway() {
      const p = runTs(CLI, ['gateway'], { ...env, ...opts.serviceEnv?.gateway }, run);
      services.push(p);
      await p.waitFor(/gateway listening/, 60_000);
      mesh.gateway = p;
      return p;
    },
    async startBridge(name, harness = 'echo', extra = {}, args = []) {
      await mkdir(join(tmp, name), { recursive: true });
      const p = runTs(
        CLI,
        ['bridge', '--harness', harness, '--session', name, '--cwd', join(tmp, name), ...args],
        {
          ...env,
          BRIDGE_STATE_DIR: join(tmp, 'state', name),
          ...extra,
        },
        run,
      );
      services.push(p);
      await p.waitFor(/bridge ready/, 120_000);
      bridges.set(name, p);
      return p;
    },
    async stop() {
      // Every part is stopped and the folder removed even when one stop fails; then that failure.
      const stops = await Promise.allSettled(services.map((s) => s.stop()));
      try {
        if (!opts.nats) await nats.stop();
      } finally {
        await temp.remove();
      }
      for (const s of stops) if (s.status === 'rejected') throw s.reason;
    },
  };
  const starts: Promise<unknown>[] = [mesh.startGateway()];
  if (opts.guard) {
    const g = runTs(CLI, ['guard'], { ...env, ...opts.serviceEnv?.guard }, run);
    services.push(g);
    starts.push(g.waitFor(/guard ready/, 60_000));
  }
  if (opts.scheduler) {
    const s = runTs(CLI, ['scheduler'], { ...env, ...opts.serviceEnv?.scheduler }, run);
    services.push(s);
    starts.push(s.waitFor(/scheduler ready/, 60_000));
  }
  for (const s of opts.sessions ?? []) starts.push(mesh.startBridge(s.name, s.harness, s.env));
  try {
    await Promise.all(starts);
  } catch (err) {
    await mesh.stop();
    throw err;
  }
  return mesh;
}

/** One JSON-RPC call to a gateway (plain fetch, as curl would). */
export async function rpc(url: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return res.json();
}
