/**
 * A mesh for the client tests (MCP and CLI), each part its own process as people run them: a real
 * nats-server, the gateway, echo bridges — and, on request, the scheduler. `cli()` runs
 * `shrooms-agent` once and returns its exit code and output.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT, freePort, runTs, startNatsServer, tempDir, type NatsServerHandle, type ServiceProcess } from '@shrooms/testing';

export const CLI = 'services/shrooms-agent/src/main.ts';

export interface ClientMesh {
  machine: string;
  gatewayUrl: string;
  nats: NatsServerHandle;
  /** Environment of every process (NATS_URL, SHROOMS_MACHINE, gateway address …). */
  env: Record<string, string>;
  bridges: Map<string, ServiceProcess>;
  startBridge(name: string, env?: Record<string, string>): Promise<ServiceProcess>;
  startScheduler(): Promise<ServiceProcess>;
  /** One `shrooms-agent …` run: exit code, stdout, stderr. */
  cli(
    args: string[],
    env?: Record<string, string>,
    opts?: { stdin?: string },
  ): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Starts `shrooms-agent …` and leaves it running (caller waits and stops it). */
  spawnCli(args: string[], env?: Record<string, string>): ServiceProcess;
  stop(): Promise<void>;
}

export async function startClientMesh(opts: {
  machine: string;
  sessions: { name: string; env?: Record<string, string> }[];
}): Promise<ClientMesh> {
  const nats = await startNatsServer();
  const temp = await tempDir('shrooms-client');
  const tmp = temp.path;
  const port = await freePort();
  const gatewayUrl = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    NATS_URL: nats.url,
    SHROOMS_MACHINE: opts.machine,
    GATEWAY_PORT: String(port),
    SHROOMS_GATEWAY_URL: gatewayUrl,
    GATEWAY_GUARD: 'off',
    LOG_LEVEL: 'info',
  };
  const procs: ServiceProcess[] = [];
  const bridges = new Map<string, ServiceProcess>();
  const start = (args: string[], extra: Record<string, string> = {}) => {
    const p = runTs(CLI, args, { ...env, ...extra });
    procs.push(p);
    return p;
  };
  const mesh: ClientMesh = {
    machine: opts.machine,
    gatewayUrl,
    nats,
    env,
    bridges,
    async startBridge(name, extra = {}) {
      await mkdir(join(tmp, name), { recursive: true });
      const p = start(['bridge', '--harness', 'echo', '--session', name, '--cwd', join(tmp, name)], {
        BRIDGE_STATE_DIR: join(tmp, 'state', name),
        ...extra,
      });
      await p.waitFor(/bridge ready/, 120_000);
      bridges.set(name, p);
      return p;
    },
    async startScheduler() {
      const p = start(['scheduler']);
      await p.waitFor(/scheduler ready/, 60_000);
      return p;
    },
    cli(args, extra = {}, o = {}) {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', join(REPO_ROOT, CLI), ...args], {
          cwd: REPO_ROOT,
          env: { ...process.env, ...env, ...extra },
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.once('error', reject);
        child.once('close', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(o.stdin ?? '');
      });
    },
    spawnCli(args, extra = {}) {
      return start(args, extra);
    },
    async stop() {
      // Every part is stopped and the folder removed even when one stop fails; then that failure.
      const stops = await Promise.allSettled(procs.map((p) => p.stop()));
      try {
        await nats.stop();
      } finally {
        await temp.remove();
      }
      for (const s of stops) if (s.status === 'rejected') throw s.reason;
    },
  };
  try {
    await start(['gateway']).waitFor(/gateway listening/, 60_000);
    await Promise.all(opts.sessions.map((s) => mesh.startBridge(s.name, s.env)));
  } catch (err) {
    await mesh.stop();
    throw err;
  }
  return mesh;
}

/** A session the gateway knows (it has a task in the ledger) whose bridge is down: asks to it queue. */
export async function startSleepingSession(mesh: ClientMesh, name: string): Promise<void> {
  const p = await mesh.startBridge(name);
  const r = await mesh.cli(['a2a', 'send', name, 'wake up', '--wait', '--json']);
  if (r.code !== 0) throw new Error(`could not give ${name} its first task: ${r.stderr}`);
  await p.stop();
  mesh.bridges.delete(name);
}
