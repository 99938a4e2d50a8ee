/**
 * `shrooms-agent mesh`: bring machines into one mesh the way a person does it.
 *
 *   mesh init   on the first machine: the mesh file, then this machine's files
 *   mesh add    on a machine that has the mesh file: one more machine in it
 *   mesh join   on every machine (again after each add): this machine's files from the mesh file
 *   mesh session  one session's bridge settings (the unit shrooms-bridge@NAME reads them)
 *
 * docs/joining.md walks through it; the machines tests (test/machines) run exactly these commands.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { isValidName } from '@shrooms/protocol';
import { cliEnv } from '../../config.js';
import { natsServerPath } from './nats-binary.js';
import {
  DEFAULT_PORTS,
  ROLES,
  defaultServices,
  newPassword,
  readMeshFile,
  withMachine,
  writeMeshFile,
  type Machine,
  type MeshFile,
  type Role,
} from './model.js';
import { permissionsFor } from './permissions.js';
import { renderMachine } from './render.js';
import { selfCommand, sh } from '../self.js';
import type { Command } from '../types.js';
import { UsageError, parseStrict, usageLine } from '../usage.js';

const HELP = `usage: shrooms-agent mesh <init|add|join|session> [options]

  mesh init --mesh NAME --machine M --address A [--role always-on|intermittent] [--nats-only]
            [--public-key KEY] [--interface wg0] [--dir DIR]
      Starts a mesh on this machine: DIR/mesh.json (its machines and the NATS route password),
      then this machine's files (as \`mesh join\`).
  mesh add M --address A --public-key KEY [--role always-on|intermittent] [--nats-only] [--dir DIR]
      Adds machine M to DIR/mesh.json (and rewrites this machine's files). Then copy mesh.json to M
      (over the mesh: it holds the route password) and run \`mesh join M\` there; run \`mesh join\`
      again on the other machines so their gateways know M's key.
  mesh join M [--mesh-file FILE] [--interface wg0] [--dir DIR]
      Writes machine M's files into DIR from the mesh file: nats.conf (+ permissions.conf,
      secrets.env with this machine's own NATS passwords, kept when run again), gateway.env,
      guard.env, scheduler.env, bridge.env, wg-names.yaml, units/*.service and, for each session,
      logins/NAME.env (its own NATS user).
  mesh session NAME --harness claude|pi|echo --cwd DIR [--auto-approve] [--dir DIR]
      Settings of one session's bridge: DIR/sessions/NAME.env, read by shrooms-bridge@NAME, and
      the session's own NATS user (session-NAME): logins/NAME.env, permissions.conf, secrets.env.

  --dir DIR        this machine's config folder (default SHROOMS_CONFIG_DIR or /etc/shrooms)
  --interface IF   the WireGuard interface whose peers the gateway reads live (default wg0)
  --role           always-on (default): a NATS node with JetStream, holds a ledger replica, runs
                   gateway and scheduler; intermittent (a laptop that sleeps): a NATS node
                   without JetStream and a gateway, never a replica. Every gateway admits new
                   tasks itself; a mesh file may still list guard for gateways set to ask one
  --nats-only      an always-on machine that runs only its NATS node (a third replica)
`;

const defaultDir = () => cliEnv().SHROOMS_CONFIG_DIR;

interface Local {
  machine: string;
  interface: string;
}

function fail(message: string): never {
  throw new UsageError(message);
}

const COMMON = { dir: { type: 'string' }, interface: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

function parse<E extends NonNullable<ParseArgsConfig['options']>>(args: string[], extra: E) {
  return parseStrict({ args, allowPositionals: true, strict: true, options: { ...COMMON, ...extra } });
}

/** This machine's own WireGuard public key, from `wg show IF public-key` (never the private key). */
function livePublicKey(iface: string): string | undefined {
  const r = spawnSync('wg', ['show', iface, 'public-key'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function machineFrom(name: string, v: Record<string, string | boolean | undefined>): Machine {
  const role = (v.role ?? 'always-on') as Role;
  if (!ROLES.includes(role)) fail(`--role is always-on or intermittent, not ${JSON.stringify(role)}`);
  if (!v.address) fail("say the machine's WireGuard address: --address A");
  if (v['nats-only'] && role !== 'always-on') fail('--nats-only is for an always-on machine (it holds a replica)');
  return {
    name,
    address: String(v.address),
    ...(v['public-key'] ? { publicKey: String(v['public-key']) } : {}),
    role,
    services: v['nats-only'] ? [] : defaultServices(role),
  };
}

/** The sessions of this machine: one settings file each in DIR/sessions (written by `mesh session`). */
function sessionsIn(dir: string): string[] {
  const folder = join(dir, 'sessions');
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((f) => f.endsWith('.env'))
    .map((f) => f.slice(0, -'.env'.length))
    .filter(isValidName)
    .sort();
}

/** Writes this machine's files; returns the paths written. */
async function apply(dir: string, local: Local): Promise<string[]> {
  const mesh = readMeshFile(join(dir, 'mesh.json'));
  const self = mesh.machines.find((m) => m.name === local.machine);
  if (!self) fail(`machine ${local.machine} is not in ${join(dir, 'mesh.json')}: add it first (mesh add ${local.machine} …)`);
  const live = livePublicKey(local.interface);
  if (live && self.publicKey && live !== self.publicKey)
    fail(`${local.interface}'s public key (${live}) is not the key mesh.json gives ${self.name} (${self.publicKey})`);
  const self_ = selfCommand();
  const { permissions, logins } = await permissionsFor(self.name, dir, self.services.includes('gateway') ? sessionsIn(dir) : []);
  const files = renderMachine({
    mesh,
    self,
    dir,
    wgInterface: local.interface,
    cli: [self_.command, ...self_.args].map(sh),
    natsServer: natsServerPath(),
    permissions,
    logins,
  });
  const written: string[] = [];
  for (const f of files) {
    const path = join(dir, f.path);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, f.text, { mode: f.secret ? 0o600 : 0o644 });
    chmodSync(path, f.secret ? 0o600 : 0o644);
    written.push(f.path);
  }
  mkdirSync(join(dir, 'sessions'), { recursive: true });
  writeFileSync(join(dir, 'machine.json'), `${JSON.stringify(local, null, 2)}\n`);
  return written;
}

function readLocal(dir: string): Local | undefined {
  const p = join(dir, 'machine.json');
  return existsSync(p) ? (JSON.parse(readFileSync(p, 'utf8')) as Local) : undefined;
}

function nextSteps(dir: string, mesh: MeshFile, machine: string): string {
  const self = mesh.machines.find((m) => m.name === machine)!;
  const units = ['shrooms-nats', ...self.services.map((s) => `shrooms-${s}`)];
  return [
    `machine ${machine} (${self.role}) of mesh ${mesh.mesh}: files in ${dir}`,
    `start it:  cp ${join(dir, 'units')}/*.service /etc/systemd/system/ && systemctl daemon-reload`,
    `           systemctl enable --now ${units.join(' ')}`,
    ...(self.services.includes('gateway')
      ? [`a session: shrooms-agent mesh session NAME --harness claude --cwd DIR --dir ${dir} && systemctl enable --now shrooms-bridge@NAME`]
      : []),
    '',
  ].join('\n');
}

async function run(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(HELP);
    return sub ? 0 : 1;
  }
  const machineOpts = {
    address: { type: 'string' },
    'public-key': { type: 'string' },
    role: { type: 'string' },
    'nats-only': { type: 'boolean' },
  } as const;
  switch (sub) {
    case 'init': {
      const { values } = parse(rest, { mesh: { type: 'string' }, machine: { type: 'string' }, ...machineOpts } as const);
      if (values.help) return (process.stdout.write(HELP), 0);
      const dir = resolve(values.dir ?? defaultDir());
      if (!values.mesh || !values.machine) fail('say the mesh and this machine: --mesh NAME --machine M');
      const file = join(dir, 'mesh.json');
      if (existsSync(file)) fail(`${file} exists: this machine is in a mesh already (use mesh add / mesh join)`);
      const iface = values.interface ?? 'wg0';
      const key = values['public-key'] ?? livePublicKey(iface);
      const machine = machineFrom(values.machine, { ...values, 'public-key': key });
      const mesh: MeshFile = {
        version: 1,
        mesh: values.mesh,
        ports: { ...DEFAULT_PORTS },
        routePassword: newPassword(),
        machines: [machine],
      };
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeMeshFile(file, mesh);
      await apply(dir, { machine: machine.name, interface: iface });
      process.stdout.write(nextSteps(dir, mesh, machine.name));
      return 0;
    }
    case 'add': {
      const { values, positionals } = parse(rest, machineOpts);
      if (values.help) return (process.stdout.write(HELP), 0);
      const dir = resolve(values.dir ?? defaultDir());
      const name = positionals[0] ?? fail('say which machine: mesh add M --address A --public-key KEY');
      if (!values['public-key']) fail(`say ${name}'s WireGuard public key (\`wg show wg0 public-key\` on ${name}): --public-key KEY`);
      const file = join(dir, 'mesh.json');
      const mesh = withMachine(readMeshFile(file), machineFrom(name, values));
      writeMeshFile(file, mesh);
      const local = readLocal(dir);
      if (local) await apply(dir, local);
      process.stdout.write(
        `added ${name} to ${file}. Next: copy it to ${name} (over the mesh) and run there\n` +
          `  shrooms-agent mesh join ${name} --mesh-file mesh.json\n` +
          `and run \`shrooms-agent mesh join\` again on the other machines with the new mesh.json.\n`,
      );
      return 0;
    }
    case 'join': {
      const { values, positionals } = parse(rest, { 'mesh-file': { type: 'string' } } as const);
      if (values.help) return (process.stdout.write(HELP), 0);
      const dir = resolve(values.dir ?? defaultDir());
      const local = readLocal(dir);
      const name = positionals[0] ?? local?.machine ?? fail('say which machine this is: mesh join M');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (values['mesh-file'] && resolve(values['mesh-file']) !== join(dir, 'mesh.json')) {
        copyFileSync(values['mesh-file'], join(dir, 'mesh.json'));
        chmodSync(join(dir, 'mesh.json'), 0o600);
      }
      const iface = values.interface ?? local?.interface ?? 'wg0';
      await apply(dir, { machine: name, interface: iface });
      process.stdout.write(nextSteps(dir, readMeshFile(join(dir, 'mesh.json')), name));
      return 0;
    }
    case 'session': {
      const { values, positionals } = parse(rest, {
        harness: { type: 'string' },
        cwd: { type: 'string' },
        'auto-approve': { type: 'boolean' },
      } as const);
      if (values.help) return (process.stdout.write(HELP), 0);
      const dir = resolve(values.dir ?? defaultDir());
      const name = positionals[0] ?? fail('say the session: mesh session NAME --harness claude --cwd DIR');
      if (!['claude', 'pi', 'echo'].includes(values.harness ?? '')) fail('--harness is claude, pi or echo');
      if (!values.cwd) fail("say the session's working directory: --cwd DIR");
      if (!isValidName(name)) fail(`not a session name: ${JSON.stringify(name)}`);
      const local = readLocal(dir) ?? fail(`${dir} has no machine yet: run mesh join first`);
      mkdirSync(join(dir, 'sessions'), { recursive: true });
      const lines = [
        `BRIDGE_HARNESS=${values.harness}`,
        `BRIDGE_CWD=${resolve(values.cwd)}`,
        `BRIDGE_STATE_DIR=${join(dir, 'state', name)}`,
        ...(values['auto-approve'] ? ['BRIDGE_AUTO_APPROVE=true'] : []),
      ];
      writeFileSync(join(dir, 'sessions', `${name}.env`), `${lines.join('\n')}\n`);
      // Its NATS user: permissions.conf, secrets.env and logins/NAME.env written again with it.
      await apply(dir, local);
      process.stdout.write(
        `session ${name}: ${join(dir, 'sessions', `${name}.env`)}, NATS user session-${name} (${join(dir, 'logins', `${name}.env`)})\n` +
          `start it: systemctl restart shrooms-nats (if it runs: it reads the new user's password at start)\n` +
          `          systemctl enable --now shrooms-bridge@${name}\n`,
      );
      return 0;
    }
    default:
      fail(`unknown subcommand ${JSON.stringify(sub)}`);
  }
}

export const meshCommand: Pick<Command, 'run'> = {
  async run(args) {
    try {
      return await run(args);
    } catch (err) {
      process.stderr.write(err instanceof UsageError ? usageLine('mesh', err.message) : `shrooms-agent mesh: ${(err as Error).message}\n`);
      return 1;
    }
  },
};
