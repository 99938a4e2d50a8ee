/**
 * The mesh file (`mesh.json`): what every machine of one mesh must agree on — the mesh's name, its
 * machines (name, WireGuard address and public key, role) and the one secret they share, the NATS
 * cluster's route password. It holds no private key and no machine's own NATS passwords: those are
 * generated on each machine by `mesh join` and never leave it (each machine's services log in to
 * their own machine's NATS node only).
 *
 * Roles (see docs/joining.md for why):
 *   always-on     a NATS cluster member with JetStream: holds a replica of the ledger (R3 needs three)
 *   intermittent  a NATS cluster member without JetStream (a laptop that sleeps): routes its
 *                 machine's traffic, holds no replica, so its absence never costs the ledger a vote
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isValidName } from '@shrooms/protocol';
import { z } from 'zod';

export const ROLES = ['always-on', 'intermittent'] as const;
export type Role = (typeof ROLES)[number];
/** What a machine runs besides NATS. `nats` alone: a small always-on box that only holds a replica. */
export const SERVICES = ['gateway', 'guard', 'scheduler'] as const;
export type Service = (typeof SERVICES)[number];

/** WireGuard public keys: 32 bytes, base64. */
const PUBLIC_KEY = /^[A-Za-z0-9+/]{43}=$/;

export const MachineSchema = z
  .object({
    name: z.string().refine(isValidName, 'not a machine name'),
    /** The machine's WireGuard (mesh) address: NATS routes and its gateway listen there. */
    address: z.string().refine((a) => isIP(a) !== 0, 'not an IP address'),
    publicKey: z.string().regex(PUBLIC_KEY, 'not a WireGuard public key').optional(),
    role: z.enum(ROLES),
    services: z.array(z.enum(SERVICES)),
  })
  .strict();
export type Machine = z.infer<typeof MachineSchema>;

export const MeshFileSchema = z
  .object({
    version: z.literal(1),
    mesh: z.string().refine(isValidName, 'not a mesh name'),
    ports: z.object({ client: z.number().int(), cluster: z.number().int(), monitor: z.number().int(), gateway: z.number().int() }).strict(),
    /** NATS cluster route password, shared by every machine of the mesh. */
    routePassword: z.string(),
    machines: z.array(MachineSchema),
  })
  .strict();
export type MeshFile = z.infer<typeof MeshFileSchema>;

export const DEFAULT_PORTS = { client: 4222, cluster: 6222, monitor: 8222, gateway: 7387 } as const;

/**
 * A random password: `pw` and 48 hex digits, like deploy/nats/make-password.sh. The letters first
 * keep nats-server (which parses a `$VARIABLE` value as a config value) from reading it as a number.
 */
export function newPassword(): string {
  return `pw${randomBytes(24).toString('hex')}`;
}

/**
 * No guard by default: every gateway admits its new tasks in its own process (GATEWAY_GUARD=local)
 * over the shared windows. `guard` stays a service a mesh file may list, for gateways set to ask one.
 */
export function defaultServices(role: Role): Service[] {
  return role === 'always-on' ? ['gateway', 'scheduler'] : ['gateway'];
}

/** Machines whose NATS node has JetStream (holds a replica of the ledger). */
export const jetStreamMachines = (mesh: MeshFile) => mesh.machines.filter((m) => m.role === 'always-on');

/** Ledger replicas: 3 once three always-on machines have joined, else as many as there are. */
export const replicas = (mesh: MeshFile) => Math.max(1, Math.min(3, jetStreamMachines(mesh).length));

export function readMeshFile(path: string): MeshFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`, { cause: err });
  }
  const parsed = MeshFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(`${path}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export function writeMeshFile(path: string, mesh: MeshFile): void {
  writeFileSync(path, `${JSON.stringify(mesh, null, 2)}\n`, { mode: 0o600 });
}

/** Adds (or, same name, replaces) a machine; refuses a second machine on one address or key. */
export function withMachine(mesh: MeshFile, machine: Machine): MeshFile {
  const parsed = MachineSchema.parse(machine);
  for (const m of mesh.machines) {
    if (m.name === parsed.name) continue;
    if (m.address === parsed.address) throw new Error(`address ${parsed.address} is already machine ${m.name}'s`);
    if (parsed.publicKey && m.publicKey === parsed.publicKey) throw new Error(`that public key is already machine ${m.name}'s`);
  }
  return { ...mesh, machines: [...mesh.machines.filter((m) => m.name !== parsed.name), parsed] };
}
