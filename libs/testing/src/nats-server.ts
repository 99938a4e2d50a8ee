/**
 * Starts a real nats-server with JetStream for tests, on free ports, with its data in a temp folder
 * that is removed on stop. A Docker engine is used (testcontainers) only when NATS_USE_DOCKER=1 and
 * one answers; otherwise the local `nats-server` binary. NATS_URL set in the environment means "use
 * that server" (an operator's own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './temp.js';

export interface NatsServerHandle {
  url: string;
  monitorUrl?: string;
  kind: 'local' | 'docker' | 'external';
  pid?: number;
  dataDir?: string;
  stop(): Promise<void>;
  /** Kill -9 (tests of crashes); the data folder stays for a restart. */
  kill(): void;
  /** Starts the same server again on the same ports and data (after stop or kill). */
  restart(): Promise<void>;
  /**
   * Calls `listener` whenever the server exits other than through `stop()` or `restart()` (a crash,
   * `kill()`, a signal from outside); returns the unsubscribe. Only for a server started here.
   */
  onExit?(listener: (exit: { code: number | null; signal: string | null }) => void): () => void;
  /** Reads its config files again (SIGHUP) and resolves once the server says it did. Local only. */
  reload?(): Promise<void>;
}

/**
 * The environment a local nats-server starts with (`up`, the bench and the tests alike), below
 * whatever the caller's environment says. GOMAXPROCS 1: one machine's mesh asks little of its
 * server, and the Go runtime's handing of each message between threads (and its spinning threads
 * looking for work) is what a second one adds — 23 % less of nats-server's CPU per task with 1 than
 * with 2 on a 2-core machine, at the same tasks/s and latency (bench/REPORT.md). `GOMAXPROCS` in the
 * environment overrides it.
 */
export const NATS_SERVER_ENV: Readonly<Record<string, string>> = { GOMAXPROCS: '1' };

export function natsServerBinary(): string {
  if (process.env.NATS_SERVER_BIN) return process.env.NATS_SERVER_BIN;
  for (const p of ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server']) if (existsSync(p)) return p;
  return 'nats-server';
}

export interface StartNatsOptions {
  timeoutMs?: number;
  /** Extra command-line arguments (e.g. `-c config`). */
  args?: string[];
  /** Fixed ports (restart tests need them stable). Default: free ones. */
  port?: number;
  monitorPort?: number;
  dataDir?: string;
  /**
   * The folder for the server's ports files (and its store when no `dataDir`), kept after stop, for
   * a long-lived server such as `up`'s: a temporary folder would stay behind when its owner is
   * killed. Default: a temporary folder, removed at stop.
   */
  runDir?: string;
  /** More environment for the server (values its config references as `$NAME`). */
  env?: Record<string, string>;
  /**
   * The config file (`args`) turns JetStream on with `dataDir` as its store, so no `-js -sd`: a
   * reload (SIGHUP) keeps JetStream only when the file says so (nats-server 2.9 drops what flags
   * enabled, and refuses a store named only by a flag).
   */
  jetStreamInConfig?: boolean;
}

export async function startNatsServer(opts: StartNatsOptions = {}): Promise<NatsServerHandle> {
  if (process.env.NATS_URL && !opts.args) {
    return { url: process.env.NATS_URL, kind: 'external', stop: async () => {}, kill: () => {}, restart: async () => {} };
  }
  if (process.env.NATS_USE_DOCKER === '1') {
    try {
      return await startInDocker(opts.timeoutMs ?? 120_000);
    } catch (e) {
      process.stderr.write(`docker unavailable (${(e as Error).message}); using the local nats-server\n`);
    }
  }
  return startLocal(opts);
}

/**
 * nats-server with JetStream in a container (testcontainers; the engine from DOCKER_HOST). The image
 * is NATS_IMAGE (default nats:2.10-alpine, pulled when missing). No user or password: the handle is
 * a URL, as the local server's is (the NATS module's container always sets one).
 */
async function startInDocker(timeoutMs: number): Promise<NatsServerHandle> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const image = process.env.NATS_IMAGE || 'nats:2.10-alpine';
  const c = await new GenericContainer(image)
    .withCommand(['-js', '-m', '8222'])
    .withExposedPorts(4222, 8222)
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
    .withStartupTimeout(timeoutMs)
    .start();
  const host = c.getHost();
  return {
    url: `nats://${host}:${c.getMappedPort(4222)}`,
    monitorUrl: `http://${host}:${c.getMappedPort(8222)}`,
    kind: 'docker',
    async stop() {
      await c.stop();
    },
    kill: () => {},
    restart: async () => {},
  };
}

/** A folder of `runDir` kept across runs: removing it takes only the launches' ports folders. */
async function keptDir(path: string): Promise<{ path: string; remove(): Promise<void> }> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  return {
    path,
    async remove() {
      const left = (await readdir(path).catch(() => [] as string[])).filter((f) => f.startsWith('ports-'));
      await Promise.all(left.map((f) => rm(join(path, f), { recursive: true, force: true })));
    },
  };
}

async function startLocal(opts: StartNatsOptions): Promise<NatsServerHandle> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const temp = opts.runDir ? await keptDir(opts.runDir) : await tempDir('shrooms-nats');
  const dir = temp.path;
  const dataDir = opts.dataDir ?? join(dir, 'js');
  let port = opts.port ?? -1;
  let monitorPort = opts.monitorPort ?? -1;
  let child!: ChildProcess;
  let expectedExit = false;
  const exitListeners = new Set<(exit: { code: number | null; signal: string | null }) => void>();
  let url = '';
  let monitorUrl = '';
  let stderr = '';

  async function launch(): Promise<void> {
    const portsDir = join(dir, `ports-${Date.now()}`);
    await mkdir(portsDir, { recursive: true });
    const args = [
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '-m',
      String(monitorPort),
      ...(opts.jetStreamInConfig ? [] : ['-js', '-sd', dataDir]),
      '--ports_file_dir',
      portsDir,
      ...(opts.args ?? []),
    ];
    child = spawn(natsServerBinary(), args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...NATS_SERVER_ENV, ...process.env, ...opts.env },
    });
    expectedExit = false;
    child.once('exit', (code, signal) => {
      if (!expectedExit) for (const l of exitListeners) l({ code, signal });
    });
    stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const deadline = Date.now() + timeoutMs;
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (e) => reject(new Error(`cannot run nats-server (${e.message}); install it: apt-get install -y nats-server`)));
      child.once('exit', (code) => reject(new Error(`nats-server exited with ${code}: ${stderr}`)));
    });
    const ready = (async () => {
      while (Date.now() < deadline) {
        // The folder is this launch's own; its file is read only once whole (nats-server may be
        // writing it as we look: a partial file read as JSON failed a restart once).
        const files = await readdir(portsDir).catch(() => [] as string[]);
        const f = files.find((x) => x.endsWith('.ports'));
        const ports = f ? parsePorts(await readFile(join(portsDir, f), 'utf8').catch(() => '')) : undefined;
        if (ports) {
          url = ports.nats[0]!;
          monitorUrl = ports.monitoring?.[0] ?? '';
          if (!monitorUrl) return;
          const ok = await fetch(`${monitorUrl}/healthz?js-enabled-only=true`).then(
            (r) => r.ok,
            () => false,
          );
          if (ok) return;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`nats-server not ready after ${timeoutMs} ms: ${stderr}`);
    })();
    await Promise.race([ready, failed]);
    failed.catch(() => {});
    port = Number(new URL(url).port);
    if (monitorUrl) monitorPort = Number(new URL(monitorUrl).port);
  }

  function waitExit(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      // Past `ms` a SIGKILL, and still the exit awaited: a server writing as its folder goes fails
      // the removal.
      const t = setTimeout(() => child.kill('SIGKILL'), ms);
      child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  try {
    await launch();
  } catch (err) {
    // A server that did not start (a config it refuses, a timeout) leaves no folder either.
    expectedExit = true;
    const started = child as ChildProcess | undefined;
    if (started) {
      started.kill('SIGKILL');
      await waitExit(5000);
    }
    await temp.remove();
    throw err;
  }
  return {
    get url() {
      return url;
    },
    get monitorUrl() {
      return monitorUrl;
    },
    get pid() {
      return child.pid;
    },
    kind: 'local',
    dataDir,
    async stop() {
      expectedExit = true;
      child.kill('SIGTERM');
      await waitExit(5000);
      await temp.remove();
    },
    kill() {
      child.kill('SIGKILL');
    },
    onExit(listener) {
      exitListeners.add(listener);
      return () => exitListeners.delete(listener);
    },
    async restart() {
      expectedExit = true;
      child.kill('SIGTERM');
      await waitExit(5000);
      await launch();
    },
    async reload() {
      // `config_load_time` in /varz moves when a reload took; a config it refuses leaves it.
      const loaded = async () => ((await (await fetch(`${monitorUrl}/varz`)).json()) as { config_load_time?: string }).config_load_time;
      const before = await loaded();
      child.kill('SIGHUP');
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline) {
        if ((await loaded()) !== before) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`nats-server did not reload its config within 5 s: ${stderr.slice(-500)}`);
    },
  };
}

function parsePorts(text: string): { nats: string[]; monitoring?: string[] } | undefined {
  try {
    const ports = JSON.parse(text) as { nats?: string[]; monitoring?: string[] };
    return ports.nats?.length ? (ports as { nats: string[]; monitoring?: string[] }) : undefined;
  } catch {
    return undefined;
  }
}
