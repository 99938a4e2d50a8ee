/**
 * Four machines on real WireGuard, set up the way docs/joining.md tells a person to: `mesh init` on
 * the home server, `mesh add` for the others there, mesh.json copied to each machine (a person uses
 * scp over the mesh), `mesh join` on each, `mesh session` for the sessions, then every unit started
 * the way systemd starts it.
 *
 *   laptop      intermittent: NATS without JetStream, gateway, a session
 *   homeserver  always-on: NATS + JetStream, gateway (admitting new tasks itself), scheduler, a session
 *   pi5         always-on: the same
 *   nas         always-on, NATS only: the third replica of the R3 ledger
 */
import { appendFileSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, startRig, type Rig, type RigMachine } from '@shrooms/testing';

export interface SessionSpec {
  machine: string;
  name: string;
  harness: 'echo' | 'pi' | 'claude';
  /** Lines a person adds to the session's env file (model endpoint, …). */
  env?: Record<string, string>;
}

export interface Machines {
  rig: Rig;
  m(name: string): RigMachine;
  /** JSON-RPC from inside `from` to `to`'s gateway over the mesh. */
  rpc(
    from: string,
    to: string,
    path: string,
    method: string,
    params: unknown,
    headers?: Record<string, string>,
    timeoutMs?: number,
  ): Promise<any>;
  /** Starts every unit of a machine (NATS first); resolves when its services are ready. */
  boot(name: string): Promise<void>;
  stop(): Promise<void>;
}

export const MACHINES = [
  { name: 'laptop', iface: 'mxwg-lap', role: 'intermittent' },
  { name: 'homeserver', iface: 'mxwg-home', role: 'always-on' },
  { name: 'pi5', iface: 'mxwg-pi5', role: 'always-on' },
  { name: 'nas', iface: 'mxwg-nas', role: 'always-on', natsOnly: true },
] as const;

function expectOk(what: string, r: { code: number | null; stdout: string; stderr: string }): string {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Settings the tests tune (a person would leave the defaults): written into the env files. */
export interface Tuning {
  all?: Record<string, string>;
  gateway?: Record<string, string>;
  bridge?: Record<string, string>;
  guard?: Record<string, string>;
  scheduler?: Record<string, string>;
}

/**
 * `beforeBoot` runs once the files are written and before any unit starts (a test starts its own
 * helpers there, e.g. the fake model server a pi session talks to).
 */
export async function startMachines(
  sessions: SessionSpec[],
  tuning: Tuning = {},
  beforeBoot?: (rig: Rig) => Promise<void>,
): Promise<Machines> {
  // `stranger` has WireGuard and the others' keys, but nobody has its key: not part of the mesh.
  const rig = await startRig({
    prefix: 'mx',
    machines: [...MACHINES.map((m) => ({ name: m.name, iface: m.iface })), { name: 'stranger', iface: 'mxwg-str', listed: false }],
  });
  try {
    const m = (name: string) => rig.machine(name);
    const dir = (name: string) => m(name).configDir;
    const home = m('homeserver');
    // 1. The first always-on machine starts the mesh (its own public key read from `wg show`).
    expectOk(
      'mesh init',
      await home.cli([
        'mesh',
        'init',
        '--mesh',
        'home',
        '--machine',
        'homeserver',
        '--address',
        home.address,
        '--interface',
        home.iface,
        '--dir',
        dir('homeserver'),
      ]),
    );
    // 2. Each other machine is added there, with the public key its owner read from `wg show`.
    for (const spec of MACHINES.filter((x) => x.name !== 'homeserver')) {
      const other = m(spec.name);
      const args = [
        'mesh',
        'add',
        spec.name,
        '--address',
        other.address,
        '--public-key',
        other.publicKey,
        '--role',
        spec.role,
        '--dir',
        dir('homeserver'),
      ];
      if ('natsOnly' in spec) args.push('--nats-only');
      expectOk(`mesh add ${spec.name}`, await home.cli(args));
    }
    // 3. mesh.json goes to each machine; each joins.
    await Promise.all(
      MACHINES.filter((x) => x.name !== 'homeserver').map(async (spec) => {
        const copy = join(rig.dir, `${spec.name}-mesh.json`);
        copyFileSync(join(dir('homeserver'), 'mesh.json'), copy);
        expectOk(
          `mesh join ${spec.name}`,
          await m(spec.name).cli(['mesh', 'join', spec.name, '--mesh-file', copy, '--interface', spec.iface, '--dir', dir(spec.name)]),
        );
      }),
    );
    // 4. Sessions.
    for (const s of sessions) {
      const cwd = join(rig.dir, s.machine, 'work', s.name);
      mkdirSync(cwd, { recursive: true });
      expectOk(
        `mesh session ${s.name}`,
        await m(s.machine).cli(['mesh', 'session', s.name, '--harness', s.harness, '--cwd', cwd, '--dir', dir(s.machine)]),
      );
      if (s.env) appendEnv(join(dir(s.machine), 'sessions', `${s.name}.env`), s.env);
    }
    for (const spec of MACHINES) {
      for (const svc of ['gateway', 'bridge', 'guard', 'scheduler'] as const) {
        const file = join(dir(spec.name), `${svc}.env`);
        const extra = { ...tuning.all, ...tuning[svc] };
        if (Object.keys(extra).length) {
          try {
            appendEnv(file, extra);
          } catch {
            /* the machine does not run it */
          }
        }
      }
    }

    async function rpc(
      from: string,
      to: string,
      path: string,
      method: string,
      params: unknown,
      headers: Record<string, string> = {},
      timeoutMs = 60_000,
    ) {
      const r = await m(from).fetch(`http://${m(to).address}:7387${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        timeoutMs,
      });
      return r.json();
    }

    async function boot(name: string) {
      const machine = m(name);
      const units = unitsOf(machine);
      const nats = machine.start('shrooms-nats');
      await eventually(
        async () => (await machine.fetch('http://127.0.0.1:8222/healthz').catch(() => undefined))?.status === 200 || undefined,
        30_000,
        100,
      ).catch((err) => {
        throw new Error(`${name}: NATS not healthy: ${(err as Error).message}\n${nats.output().slice(-2000)}`);
      });
      const services = units.filter((u) => u !== 'shrooms-nats' && u !== 'shrooms-bridge@');
      await Promise.all(services.map((u) => startUnit(machine, u, '', /gateway listening|guard ready|scheduler ready/, 90_000)));
      const bridges = sessions.filter((s) => s.machine === name);
      await Promise.all(bridges.map((s) => startUnit(machine, 'shrooms-bridge@', s.name, /bridge ready/, 120_000)));
    }

    const machines: Machines = {
      rig,
      m,
      rpc,
      boot,
      stop: () => rig.teardown(),
    };
    await beforeBoot?.(rig);
    // Every machine at once, as when they are switched on: NATS first on each, then its services.
    await Promise.all(MACHINES.map((x) => boot(x.name)));
    return machines;
  } catch (err) {
    await rig.teardown();
    throw err;
  }
}

/** The units' `Restart=always` / `RestartSec=2s` (render.ts), as systemd applies them while a unit starts. */
const RESTART_SEC_MS = 2_000;
const START_ATTEMPTS = 5;

/**
 * Starts a unit and waits for its ready line; a unit that exits first is started again after
 * RestartSec, as systemd does — e.g. the laptop's gateway (no JetStream of its own) when all machines
 * are switched on at once and the cluster is still electing its JetStream leader. Each restart is
 * said on stderr; after START_ATTEMPTS the last failure stands. Only while booting: a unit that dies
 * later is a failure of the test that saw it.
 */
async function startUnit(machine: RigMachine, unit: string, instance: string, ready: RegExp, timeoutMs: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const p = machine.start(unit, instance);
    try {
      await p.waitFor(ready, timeoutMs);
      return;
    } catch (err) {
      const exited = p.child.exitCode !== null || p.child.signalCode !== null;
      if (!exited || attempt >= START_ATTEMPTS) throw err;
      process.stderr.write(
        `machines: ${machine.name} ${unit}${instance} exited while starting (${p.child.exitCode ?? p.child.signalCode}); restarting it as systemd would\n${p.output().slice(-500)}\n`,
      );
      await new Promise((r) => setTimeout(r, RESTART_SEC_MS));
    }
  }
}

function appendEnv(file: string, vars: Record<string, string>): void {
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  appendFileSync(
    file,
    Object.entries(vars)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
}

/** The units `mesh join` wrote for a machine (names without `.service`). */
export function unitsOf(machine: RigMachine): string[] {
  const order = ['shrooms-nats', 'shrooms-guard', 'shrooms-scheduler', 'shrooms-gateway', 'shrooms-bridge@'];
  return order.filter((u) => existsSync(join(machine.configDir, 'units', `${u}.service`)));
}
