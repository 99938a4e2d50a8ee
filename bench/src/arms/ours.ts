/**
 * The ours arm: the full path, as a person runs it — gateway, guard (when the CLI has it) and a
 * session-bridge with the echo harness, each its own process through the `shrooms-agent` CLI,
 * over JetStream file storage. Limits that would refuse the load (queue length, open tasks, the
 * loop guard's rate) are raised for the run so their cost is measured, not their refusals.
 */
import { spawn } from 'node:child_process';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { Ledger, transitions } from '@shrooms/ledger';
import { META, SERVICE_NAMES, type Message } from '@shrooms/protocol';
import { CLI, REPO_ROOT, startMesh, type Mesh, type NatsServerHandle } from '@shrooms/testing';
import { join } from 'node:path';
import { SHELF, SHELF_EPOCH_MS, shelfMessageId, shelfTaskId, shelfText } from './shelf.js';

export const SESSION = 'bench';
export const MACHINE = 'benchbox';

/** What the run raises so the figures show cost, not refusals (reported as such). */
export const RAISED_LIMITS: Record<string, string> = {
  LIMIT_QUEUE_LENGTH: '1000000',
  LIMIT_OPEN_TASKS: '1000000',
  GUARD_RATE_MAX: '1000000000',
  GUARD_BUDGET_MAX: '0',
};

/** True when `shrooms-agent guard` exists (the guard service is wired into the CLI). */
export function cliHasGuard(): Promise<boolean> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', join(REPO_ROOT, CLI), 'guard', '--help'], { cwd: REPO_ROOT, stdio: 'ignore' });
    p.once('error', () => resolve(false));
    p.once('exit', (code) => resolve(code === 0));
  });
}

export interface Ours {
  mesh: Mesh;
  url: string;
  shelfUrl: string;
  guard: boolean;
  nc: NatsConnection;
  ledger: Ledger;
  pids(): Record<string, number>;
  /** Writes shelf tasks [from, from+count) straight into the ledger, `window` writes in flight. */
  preload(from: number, count: number, window?: number): Promise<void>;
  /** Admit requests the guard has answered ($SRV.STATS), or null without a guard. */
  guardAdmits(): Promise<number | null>;
  stop(): Promise<void>;
}

export async function startOurs(nats: NatsServerHandle, opts: { guard: boolean; env?: Record<string, string> }): Promise<Ours> {
  const mesh = await startMesh({
    nats,
    machine: MACHINE,
    sessions: [{ name: SESSION, harness: 'echo' }],
    guard: opts.guard,
    env: { ...RAISED_LIMITS, ...opts.env },
  });
  const nc = await connect({ servers: nats.url, name: 'bench preload' });
  const ledger = await Ledger.open(nc);
  return {
    mesh,
    url: `${mesh.gatewayUrl}/a2a/${SESSION}`,
    shelfUrl: `${mesh.gatewayUrl}/a2a/${SHELF}`,
    guard: opts.guard,
    nc,
    ledger,
    pids() {
      const out: Record<string, number> = {};
      if (mesh.gateway?.child.pid) out.gateway = mesh.gateway.child.pid;
      const b = mesh.bridges.get(SESSION)?.child.pid;
      if (b) out.bridge = b;
      const g = mesh.services.find((s) => s !== mesh.gateway && ![...mesh.bridges.values()].includes(s))?.child.pid;
      if (opts.guard && g) out.guard = g;
      return out;
    },
    async preload(from, count, window = 256) {
      let next = from;
      const end = from + count;
      const worker = async () => {
        while (next < end) {
          const i = next++;
          const entry = shelfEntry(i);
          const created = await ledger.create(ledger.key(MACHINE, SHELF, shelfMessageId(i)), entry);
          if (!created) throw new Error(`shelf task ${i} exists already`);
        }
      };
      await Promise.all(Array.from({ length: Math.min(window, count) }, worker));
    },
    async guardAdmits() {
      if (!opts.guard) return null;
      try {
        const r = await nc.request(`$SRV.STATS.${SERVICE_NAMES.guard}`, '', { timeout: 2000 });
        const stats = r.json<{ endpoints?: { name: string; num_requests: number }[] }>();
        return stats.endpoints?.find((e) => e.name === 'admit')?.num_requests ?? 0;
      } catch {
        return null;
      }
    },
    async stop() {
      await nc.drain().catch(() => {});
      await mesh.stop();
    },
  };
}

/** Shelf task i as our path leaves it: asked, started, finished by the echo harness. */
function shelfEntry(i: number) {
  const at = new Date(SHELF_EPOCH_MS + i);
  const message: Message = { messageId: shelfMessageId(i), role: 'ROLE_USER', parts: [{ text: shelfText(i) }] };
  const metadata = { [META.depth]: 0, [META.chain]: [], [META.session]: SHELF, [META.machine]: MACHINE, [META.device]: MACHINE };
  const asked = transitions.newTask({ id: shelfTaskId(i), contextId: `shelf-ctx-${i}`, message, metadata, queued: false, now: at });
  const started = transitions.start(asked, at);
  return transitions.complete(started, shelfText(i), at);
}
