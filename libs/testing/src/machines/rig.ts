/**
 * A test rig of N machines on one host: each machine a network namespace on a shared underlay
 * (a bridge in a switch namespace, 192.0.2.0/24), joined by real WireGuard tunnels (userspace
 * wireguard-go, one interface per machine, 100.64.0.0/24), with its own loopback — so every machine
 * runs NATS on 127.0.0.1:4222 and its gateway on :7387 exactly as a real one does.
 *
 * Everything is named with the given prefix. Tear-down kills every process the rig started (by
 * pid), deletes the namespaces (their veths and tunnels go with them) and the rig's folder; it runs
 * from `teardown()`, and also when the test process exits without it. A run that crashed before
 * tearing down is swept at the next start (namespaces and WireGuard sockets with the prefix).
 *
 * Needs root, `ip`, `nft`, `wireguard-go` and `wg` (the test command installs the last two).
 *
 * Over 300 lines: startRig is one sequence — underlay, tunnels, each machine's processes — whose
 * steps share the rig's folder and the list its teardown kills; split, that state would be passed
 * around for nothing.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT, wrap, type ServiceProcess } from '../processes.js';
import { tempDirSync } from '../temp.js';
import { readUnit } from './units.js';
import { sweepNamespaces } from '../netns/sweep.js';

export interface RigMachineSpec {
  name: string;
  /** WireGuard interface name: unique on the host (the control sockets share /var/run/wireguard), ≤ 15 chars. */
  iface: string;
  /**
   * false: a stranger — it has WireGuard and lists the others as its peers, but no machine lists
   * it (its key is unknown to them). Default true.
   */
  listed?: boolean;
}

export interface RigOptions {
  /** Prefix of every namespace and interface (namespaces `PREFIX-NAME`). */
  prefix: string;
  machines: RigMachineSpec[];
  /** How long to wait for another rig of the same prefix to finish, ms. Default 600 000. */
  lockTimeoutMs?: number;
}

export interface FetchResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  json(): any;
}

export interface RigMachine {
  readonly name: string;
  readonly ns: string;
  readonly iface: string;
  /** Underlay address (the "internet" between machines). */
  readonly underlay: string;
  /** WireGuard (mesh) address. */
  readonly address: string;
  readonly publicKey: string;
  /** The machine's config folder (`mesh join --dir`). */
  readonly configDir: string;
  /** Runs `shrooms-agent ARGS` inside the machine; resolves with its exit code and output. */
  cli(args: string[], env?: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Starts a unit of configDir/units as systemd would (its environment files, its ExecStart). */
  start(unit: string, instance?: string): ServiceProcess;
  /** Starts any program inside the machine (tracked, torn down with it). */
  spawn(label: string, argv: string[], env?: Record<string, string>): ServiceProcess;
  /** The processes started here, by label (`shrooms-gateway`, `shrooms-bridge@demo`, …). */
  readonly processes: Map<string, ServiceProcess>;
  /** An HTTP request made from inside the machine. */
  fetch(url: string, init?: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number }): Promise<FetchResult>;
  /** Drops all underlay traffic in and out (nft): the machine is cut off; its tunnels go silent. */
  cut(): void;
  heal(): void;
  /** SIGSTOP / SIGCONT of every process of the machine, its WireGuard included (a laptop asleep). */
  sleep(): void;
  wake(): void;
  /** kill -9 of every process the units started (its NATS node included); the tunnel stays. */
  killAll(): Promise<void>;
  /** `wg set IFACE peer KEY remove` / the peer again, as the rig first set it. */
  removePeer(other: RigMachine): void;
  addPeer(other: RigMachine): void;
}

export interface Rig {
  readonly dir: string;
  readonly machines: RigMachine[];
  machine(name: string): RigMachine;
  /** Kills every process, deletes every namespace and the rig's folder. */
  teardown(): Promise<void>;
}

const TOOLS = ['ip', 'nft', 'wg', 'wireguard-go'];

function run(cmd: string, args: string[], input?: string): string {
  return execFileSync(cmd, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Whether the rig can run here (root and the tools); otherwise the reason. */
export function rigUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'the machines rig needs root (network namespaces)';
  const missing = TOOLS.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  if (missing.length) return `missing ${missing.join(', ')} (apt-get install -y wireguard-go wireguard-tools nftables iproute2)`;
  return undefined;
}

/** Removes what a crashed run of this prefix left behind. */
export function sweepRig(prefix: string): void {
  sweepNamespaces(prefix);
  const sockets = '/var/run/wireguard';
  if (existsSync(sockets))
    for (const f of readdirSync(sockets)) if (f.startsWith(`${prefix}wg-`)) rmSync(join(sockets, f), { force: true });
}

/**
 * One rig per prefix on a host at a time: a second run (another worktree, another developer) waits
 * for the first to finish instead of sweeping its namespaces away. The lock file holds the owner's
 * pid; a lock whose owner is dead is taken over (and that run's leftovers swept).
 */
async function takeLock(prefix: string, timeoutMs: number): Promise<() => void> {
  const file = join(tmpdir(), `shrooms-rig-${prefix}.lock`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return function releaseLock() {
        rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number(readFileSync(file, 'utf8').trim() || '0');
    if (!owner || !alive(owner)) {
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another rig of prefix ${prefix} (pid ${owner}) is still running after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startRig(opts: RigOptions): Promise<Rig> {
  const why = rigUnavailable();
  if (why) throw new Error(why);
  const { prefix } = opts;
  for (const m of opts.machines)
    if (m.iface.length > 15 || !m.iface.startsWith(`${prefix}wg-`))
      throw new Error(`interface ${m.iface}: must start with ${prefix}wg- and be ≤ 15 chars`);
  const releaseLock = await takeLock(prefix, opts.lockTimeoutMs ?? 600_000);
  sweepRig(prefix);
  const dir = tempDirSync(`shrooms-rig-${prefix}`).path;
  const all: ServiceProcess[] = [];
  const sw = `${prefix}-switch`;
  let down = false;

  function teardownSync(): void {
    if (down) return;
    down = true;
    for (const p of all) {
      try {
        process.kill(p.child.pid!, 'SIGCONT');
        p.child.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }
    sweepRig(prefix);
    rmSync(dir, { recursive: true, force: true });
    releaseLock();
  }
  const onExit = () => teardownSync();
  process.once('exit', onExit);

  try {
    run('ip', ['netns', 'add', sw]);
    run('ip', ['-n', sw, 'link', 'add', `${prefix}br0`, 'type', 'bridge']);
    run('ip', ['-n', sw, 'link', 'set', `${prefix}br0`, 'up']);
    const specs = opts.machines.map((spec, i) => {
      const n = i + 1;
      const key = run('wg', ['genkey']).trim();
      const keyFile = join(dir, `${spec.name}.key`);
      writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
      return { ...spec, n, ns: `${prefix}-${spec.name}`, keyFile, publicKey: run('wg', ['pubkey'], key).trim() };
    });
    for (const s of specs) {
      const vm = `${prefix}v${s.n}m`;
      const vs = `${prefix}v${s.n}s`;
      run('ip', ['netns', 'add', s.ns]);
      run('ip', ['link', 'add', vm, 'netns', s.ns, 'type', 'veth', 'peer', 'name', vs, 'netns', sw]);
      run('ip', ['-n', sw, 'link', 'set', vs, 'master', `${prefix}br0`, 'up']);
      run('ip', ['-n', s.ns, 'addr', 'add', `192.0.2.${s.n}/24`, 'dev', vm]);
      run('ip', ['-n', s.ns, 'link', 'set', vm, 'up']);
      run('ip', ['-n', s.ns, 'link', 'set', 'lo', 'up']);
    }
    const machines: RigMachine[] = [];
    for (const s of specs) {
      const configDir = join(dir, s.name, 'etc');
      mkdirSync(configDir, { recursive: true });
      const processes = new Map<string, ServiceProcess>();
      const underlayDev = `${prefix}v${s.n}m`;
      const inNs = (argv: string[]) => ['netns', 'exec', s.ns, ...argv];
      const track = (label: string, p: ServiceProcess) => {
        processes.set(label, p);
        all.push(p);
        return p;
      };
      const spawnIn = (label: string, argv: string[], env: Record<string, string> = {}) =>
        track(
          label,
          wrap(
            spawn('ip', inNs(argv), {
              cwd: REPO_ROOT,
              env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: join(dir, s.name), LOG_LEVEL: 'info', ...env },
              stdio: ['pipe', 'pipe', 'pipe'],
            }),
          ),
        );
      // WireGuard: userspace, in the foreground, so the rig owns its pid.
      const wg = spawnIn('wireguard-go', ['wireguard-go', '-f', s.iface], { WG_PROCESS_FOREGROUND: '1' });
      await waitFor(
        () => existsSync(`/var/run/wireguard/${s.iface}.sock`),
        10_000,
        `wireguard-go ${s.iface}`,
        () => wg.output(),
      );
      run('ip', inNs(['wg', 'set', s.iface, 'listen-port', '51820', 'private-key', s.keyFile]));
      run('ip', ['-n', s.ns, 'addr', 'add', `100.64.0.${s.n}/24`, 'dev', s.iface]);
      run('ip', ['-n', s.ns, 'link', 'set', s.iface, 'up']);

      let agent: { send(req: object): Promise<any> } | undefined;
      function nsAgent() {
        if (agent) return agent;
        const p = spawnIn('ns-agent', [process.execPath, join(import.meta.dirname, 'ns-agent.mjs')]);
        const waiting = new Map<number, (v: any) => void>();
        let next = 0;
        const ready = new Promise<void>((resolve) => {
          createInterface({ input: p.child.stdout! }).on('line', (line) => {
            const msg = JSON.parse(line);
            if (msg.ready) return resolve();
            waiting.get(msg.id)?.(msg);
            waiting.delete(msg.id);
          });
        });
        agent = {
          async send(req) {
            await ready;
            const id = next++;
            return new Promise((resolve) => {
              waiting.set(id, resolve);
              p.child.stdin!.write(`${JSON.stringify({ ...req, id })}\n`);
            });
          },
        };
        return agent;
      }
      const peerArgs = (o: (typeof specs)[number]) => [
        'peer',
        o.publicKey,
        'allowed-ips',
        `100.64.0.${o.n}/32`,
        'endpoint',
        `192.0.2.${o.n}:51820`,
      ];
      const table = `${prefix}cut`;
      const m: RigMachine = {
        name: s.name,
        ns: s.ns,
        iface: s.iface,
        underlay: `192.0.2.${s.n}`,
        address: `100.64.0.${s.n}`,
        publicKey: s.publicKey,
        configDir,
        processes,
        cli(args, env = {}) {
          const p = spawnIn(
            `cli-${Date.now()}`,
            [
              process.execPath,
              '--conditions=development',
              '--import',
              'tsx',
              join(REPO_ROOT, 'services/shrooms-agent/src/main.ts'),
              ...args,
            ],
            env,
          );
          let stdout = '';
          let stderr = '';
          p.child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
          p.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
          return new Promise((resolve) => p.child.once('exit', (code) => resolve({ code, stdout, stderr })));
        },
        start(unit, instance = '') {
          const label = instance ? unit.replace('@', `@${instance}`) : unit;
          const { argv, env } = readUnit(join(configDir, 'units', `${unit}.service`), instance);
          return spawnIn(label, argv, env);
        },
        spawn: spawnIn,
        async fetch(url, init = {}) {
          const r = await nsAgent().send({ url, ...init });
          if (r.error) throw new Error(`${s.name} → ${url}: ${r.error}`);
          return { status: r.status, headers: r.headers, text: r.text, json: () => JSON.parse(r.text) };
        },
        cut() {
          run(
            'ip',
            inNs(['nft', '-f', '-']),
            `table inet ${table} {\n chain in { type filter hook input priority -10; iifname "${underlayDev}" drop; }\n chain out { type filter hook output priority -10; oifname "${underlayDev}" drop; }\n}\n`,
          );
        },
        heal() {
          run('ip', inNs(['nft', 'delete', 'table', 'inet', table]));
        },
        sleep() {
          for (const p of processes.values()) if (p.child.exitCode === null) process.kill(p.child.pid!, 'SIGSTOP');
        },
        wake() {
          for (const p of processes.values()) if (p.child.exitCode === null) process.kill(p.child.pid!, 'SIGCONT');
        },
        async killAll() {
          const victims = [...processes.entries()].filter(([label]) => label.startsWith('shrooms-'));
          for (const [, p] of victims) p.child.kill('SIGKILL');
          await Promise.all(
            victims.map(([, p]) =>
              p.child.exitCode === null && p.child.signalCode === null ? new Promise((r) => p.child.once('exit', r)) : null,
            ),
          );
        },
        removePeer(other) {
          run('ip', inNs(['wg', 'set', s.iface, 'peer', other.publicKey, 'remove']));
        },
        addPeer(other) {
          run('ip', inNs(['wg', 'set', s.iface, ...peerArgs(specs.find((x) => x.name === other.name)!)]));
        },
      };
      machines.push(m);
    }
    // Every machine a peer of every other, as a person's WireGuard config would have it.
    const listed = new Set(specs.filter((x) => x.listed !== false).map((x) => x.name));
    for (const m of machines) for (const o of machines) if (o !== m && listed.has(o.name)) m.addPeer(o);
    const byName = new Map(machines.map((m) => [m.name, m]));
    return {
      dir,
      machines,
      machine(name) {
        const m = byName.get(name);
        if (!m) throw new Error(`no machine ${name} in the rig`);
        return m;
      },
      async teardown() {
        const exits = all
          .filter((p) => p.child.exitCode === null && p.child.signalCode === null)
          .map((p) => new Promise((resolve) => p.child.once('exit', resolve)));
        process.off('exit', onExit);
        teardownSync();
        await Promise.all(exits);
      },
    };
  } catch (err) {
    process.off('exit', onExit);
    teardownSync();
    throw err;
  }
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs} ms: ${output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
