/**
 * A private Docker engine for tests: Debian's `dockerd` (docker.io) with its own data root, exec
 * root, socket, pidfile, config file, cgroup parent and bridge, so it never touches another daemon
 * on the machine, and never the host's iptables or ip_forward. `stop()` always leaves nothing
 * behind: containers, the daemon and its containerd, every mount under its folder (the data root's
 * bind mount, exec/netns/default, layer mounts), its bridge, its cgroups and its folder.
 *
 * Needs root. `dockerEngineUnavailable()` says why an engine cannot start here (then tests skip,
 * saying so); once it could start, any failure to start is an error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type RunOptions } from './exec.js';

/** Debian's paths: another `docker` client earlier on PATH may not speak to a 20.10 engine. */
export const DOCKERD_BIN = '/usr/sbin/dockerd';
export const DOCKER_BIN = '/usr/bin/docker';
export const DOCKER_COMPOSE_BIN = '/usr/bin/docker-compose';

export interface DockerEngine {
  /** For clients: `unix://DIR/docker.sock` (DOCKER_HOST). */
  host: string;
  dir: string;
  storageDriver: string;
  /** The default bridge's gateway address (containers on it reach the host there). */
  bridgeAddress: string;
  /** `docker -H host ...args`: its stdout, or an error with its output's tail. */
  docker(args: string[], opts?: RunOptions): Promise<string>;
  /** The environment a client (docker, docker-compose, testcontainers) needs to use this engine. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

/** Why no engine can start here, or undefined when one can. */
export function dockerEngineUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'not root (a private dockerd needs root)';
  for (const bin of [DOCKERD_BIN, DOCKER_BIN, '/usr/sbin/ip', '/usr/bin/mount'])
    if (!existsSync(bin) && !existsSync(bin.replace('/usr/', '/'))) return `${bin} missing (apt-get install -y docker.io)`;
  return undefined;
}

export interface StartDockerOptions {
  /** Name prefix of the folder, bridge and cgroup parent. Default `shd`. */
  prefix?: string;
  /** Default: overlay2, or vfs where overlay2 cannot run (e.g. a data root on overlayfs). */
  storageDriver?: 'overlay2' | 'vfs';
  /** Default 60 s. */
  readyTimeoutMs?: number;
}

export async function startDockerEngine(opts: StartDockerOptions = {}): Promise<DockerEngine> {
  const why = dockerEngineUnavailable();
  if (why) throw new Error(`no Docker engine can start here: ${why}`);
  const prefix = opts.prefix ?? 'shd';
  const drivers = opts.storageDriver ? [opts.storageDriver] : (['overlay2', 'vfs'] as const);
  let last: Error | undefined;
  for (const driver of drivers) {
    try {
      return await startWith(prefix, driver, opts.readyTimeoutMs ?? 60_000);
    } catch (e) {
      last = e as Error;
    }
  }
  throw last!;
}

async function startWith(prefix: string, storageDriver: string, readyTimeoutMs: number): Promise<DockerEngine> {
  const dir = await mkdtemp(join(tmpdir(), `${prefix}-dockerd-`));
  const id = randomBytes(4).toString('hex');
  const bridge = `${prefix}-${id}`.slice(0, 15);
  const cgroupParent = `${prefix}-${id}`;
  const socket = join(dir, 'docker.sock');
  const host = `unix://${socket}`;
  const net = await freeSubnet();
  let child: ChildProcess | undefined;
  let log = '';
  const docker = (args: string[], o: RunOptions = {}) => run(DOCKER_BIN, ['-H', host, ...args], o);

  async function stop(): Promise<void> {
    if (child && child.exitCode === null && child.signalCode === null) {
      const ids = await docker(['ps', '-aq'], { timeoutMs: 30_000 }).catch(() => '');
      if (ids.trim()) await docker(['rm', '-f', '-v', ...ids.trim().split(/\s+/)], { timeoutMs: 60_000 }).catch(() => '');
      const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child!.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    killProcessesUsing(dir);
    await unmountUnder(dir);
    await run('ip', ['link', 'del', bridge]).catch(() => '');
    removeCgroups(cgroupParent);
    await rm(dir, { recursive: true, force: true });
  }

  try {
    await writeFile(join(dir, 'daemon.json'), '{}\n');
    await run('ip', ['link', 'add', bridge, 'type', 'bridge']);
    await run('ip', ['addr', 'add', `${net.bridge}/24`, 'dev', bridge]);
    await run('ip', ['link', 'set', bridge, 'up']);
    child = spawn(
      DOCKERD_BIN,
      [
        '--config-file',
        join(dir, 'daemon.json'),
        '--data-root',
        join(dir, 'data'),
        '--exec-root',
        join(dir, 'exec'),
        '--pidfile',
        join(dir, 'docker.pid'),
        '-H',
        host,
        `--storage-driver=${storageDriver}`,
        // The host's firewall and sysctls are not ours to change.
        '--iptables=false',
        '--ip-masq=false',
        '--ip-forward=false',
        '--bridge',
        bridge,
        '--default-address-pool',
        `base=${net.pool},size=24`,
        '--cgroup-parent',
        cgroupParent,
        '--log-level',
        'warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (d: Buffer) => {
      log = (log + d.toString()).slice(-8000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<never>((_, reject) => {
      child!.once('error', (e) => reject(new Error(`cannot run dockerd: ${e.message}`)));
      child!.once('exit', (code) => reject(new Error(`dockerd (${storageDriver}) exited with ${code}:\n${log}`)));
    });
    exited.catch(() => {});
    const ready = (async () => {
      const deadline = Date.now() + readyTimeoutMs;
      for (;;) {
        const ok = await docker(['version', '--format', '{{.Server.Version}}'], { timeoutMs: 10_000 }).then(
          () => true,
          () => false,
        );
        if (ok) return;
        if (Date.now() > deadline) throw new Error(`dockerd not ready after ${readyTimeoutMs} ms:\n${log}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await Promise.race([ready, exited]);
  } catch (e) {
    await stop();
    throw e;
  }

  return {
    host,
    dir,
    storageDriver,
    bridgeAddress: net.bridge,
    docker,
    env: () => ({
      DOCKER_HOST: host,
      // testcontainers: its reaper image cannot be pulled here, and stop() removes every container.
      TESTCONTAINERS_RYUK_DISABLED: 'true',
      COMPOSE_DOCKER_CLI_BUILD: '1',
      DOCKER_BUILDKIT: '1',
    }),
    stop,
  };
}

/** A 10.x.0.0/16 no route of this machine touches: the bridge gets .0.1, networks the rest. */
async function freeSubnet(): Promise<{ bridge: string; pool: string }> {
  const routes = (await run('ip', ['-4', 'route', 'show', 'table', 'all']).catch(() => ''))
    .split('\n')
    .map((l) => l.split(/\s+/).find((w) => /^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(w)))
    .filter((x): x is string => !!x);
  const toInt = (a: string) => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const overlaps = (base: number) =>
    routes.some((r) => {
      const [addr, bits = '32'] = r.split('/');
      const size = 2 ** (32 - Number(bits));
      const start = toInt(addr!) - (toInt(addr!) % size);
      return start < base + 65536 && base < start + size;
    });
  for (let i = 0; i < 200; i++) {
    const second = 128 + Math.floor(Math.random() * 120);
    if (!overlaps(toInt(`10.${second}.0.0`))) return { bridge: `10.${second}.0.1`, pool: `10.${second}.0.0/16` };
  }
  throw new Error('no free 10.x.0.0/16 for the private engine');
}

/** containerd and its shims outlive a dockerd that was killed: every process naming our folder. */
function killProcessesUsing(dir: string): void {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmdline.includes(dir) && Number(pid) !== process.pid) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        /* gone already */
      }
    }
  }
}

/** Every mount at or under dir, deepest first (dockerd bind-mounts its data root on itself). */
export async function unmountUnder(dir: string): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const points = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4])
      .filter((p): p is string => !!p && (p === dir || p.startsWith(`${dir}/`)))
      .map((p) => p.replace(/\\040/g, ' '))
      .sort((a, b) => b.length - a.length);
    if (!points.length) return;
    for (const p of points) await run('umount', [p]).catch(() => run('umount', ['-l', p]).catch(() => ''));
  }
}

function removeCgroups(name: string): void {
  const root = '/sys/fs/cgroup';
  const tops = existsSync(join(root, name))
    ? [join(root, name)]
    : (() => {
        try {
          return readdirSync(root).map((c) => join(root, c, name));
        } catch {
          return [];
        }
      })();
  const removeTree = (p: string) => {
    try {
      if (!statSync(p).isDirectory()) return;
      for (const c of readdirSync(p)) if (statSync(join(p, c)).isDirectory()) removeTree(join(p, c));
      rmdirSync(p);
    } catch {
      /* not there, or still in use */
    }
  };
  tops.forEach(removeTree);
}
