/**
 * The ours arm: the full path, as a person runs it — the gateway (admitting in its own process, as
 * `up` runs it; or asking a guard process, `--admission service`) and a session-bridge with the echo
 * harness, each its own process through the compiled `shrooms-agent` CLI, over JetStream file storage. Limits that would refuse the load (queue length, open tasks, the
 * loop guard's rate) are raised for the run so their cost is measured, not their refusals.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { Ledger, transitions } from '@shrooms/ledger';
import { BUCKETS, META, SERVICE_NAMES, type Message } from '@shrooms/protocol';
import { startMesh, type Mesh } from '@shrooms/testing';
import { stoppedOnInterrupt } from '../interrupt.js';
import { BUILT } from '../child.js';
import { benchLogin } from './login.js';
import type { BenchNats } from './nats.js';
import { SHELF, SHELF_EPOCH_MS, shelfMessageId, shelfTaskId, shelfText } from './shelf.js';

export const SESSION = 'bench';
export const MACHINE = 'benchbox';
/** NATS connection names of ours' serving processes (gateway, the bench session's bridge, guard). */
export const OURS_SERVING = /^(gateway |bridge [^/]+\/bench$|shrooms-guard)/;

/** What the run raises so the figures show cost, not refusals (reported as such). */
export const RAISED_LIMITS: Record<string, string> = {
  LIMIT_QUEUE_LENGTH: '1000000',
  LIMIT_OPEN_TASKS: '1000000',
  // A full run holds its throughput tasks plus the 100,000 of the large-ledger reads: past the
  // default 200,000 retained tasks the preload would be refused.
  LIMIT_RETAINED_TASKS: '10000000',
  // The loop guard stores every task admitted within its window, at most 1,000 (its largest
  // setting). At the ~1,000 tasks a second ours admits here, 100 ms holds about 100 ids: three times
  // a default window (30 an hour) at its limit, far from 1,000. A 30 ms window (about 30 ids)
  // measured the same (`--hot`, three runs each alternated, 2026-12-04): the window's size is not
  // what admission costs here.
  GUARD_RATE_MAX: '1000',
  GUARD_RATE_WINDOW_MS: '100',
  GUARD_BUDGET_MAX: '0',
};

/** Sessions beyond the first, for the figure with the load spread over several sessions. */
export const SPREAD_SESSIONS = ['bench-2', 'bench-3', 'bench-4', 'bench-5', 'bench-6', 'bench-7', 'bench-8'];
/** Every session a bridge of ours serves in a run (each has its own NATS user, as under `up`). */
export const OURS_SESSIONS = [SESSION, ...SPREAD_SESSIONS, SHELF];

/**
 * How ours admits new tasks: in the gateway's process (`up`'s default), by asking a guard process, or
 * not at all (`off`: no loop limits — never how people run it; it measures what admission costs).
 */
export type Admission = 'local' | 'service' | 'off';
export const ADMISSIONS: readonly Admission[] = ['local', 'service', 'off'];

export interface Ours {
  mesh: Mesh;
  url: string;
  /** The first session's url, then one per spread session. */
  spreadUrls: string[];
  shelfUrl: string;
  admission: Admission;
  nc: NatsConnection;
  ledger: Ledger;
  pids(): Record<string, number>;
  /** Writes shelf tasks [from, from+count) straight into the ledger, `window` writes in flight. */
  preload(from: number, count: number, window?: number): Promise<void>;
  /**
   * Tasks admitted so far: the guard service's answered admit requests ($SRV.STATS), or the windows'
   * writes (the guard bucket's last sequence) when the gateway admits itself; null when unreadable.
   */
  admits(): Promise<number | null>;
  stop(): Promise<void>;
}

export async function startOurs(
  nats: BenchNats,
  /** `unbundled`: the CLI from each package's dist/, so that a CPU profile names packages (profile/run.ts). */
  opts: { admission: Admission; spread?: number; env?: Record<string, string>; unbundled?: boolean },
): Promise<Ours> {
  const spread = SPREAD_SESSIONS.slice(0, Math.max(0, (opts.spread ?? 0) - 1));
  const mesh = stoppedOnInterrupt(
    await startMesh({
      nats: nats.server,
      machine: MACHINE,
      sessions: [SESSION, ...spread].map((name) => ({ name, harness: 'echo' as const, env: nats.users.sessionLogin(name) })),
      guard: opts.admission === 'service',
      env: { ...RAISED_LIMITS, GATEWAY_GUARD: opts.admission, ...opts.env },
      serviceEnv: nats.serviceEnv,
      built: BUILT && opts.unbundled ? 'unbundled' : BUILT,
    }),
  );
  const nc = await connect({ servers: nats.server.url, name: 'bench preload', ...benchLogin(nats.adminEnv) });
  // Not the owner: the bucket keeps the limit the gateway gave it (the run's raised one).
  const ledger = await Ledger.open(nc);
  return {
    mesh,
    url: `${mesh.gatewayUrl}/a2a/${SESSION}`,
    spreadUrls: [SESSION, ...spread].map((name) => `${mesh.gatewayUrl}/a2a/${name}`),
    shelfUrl: `${mesh.gatewayUrl}/a2a/${SHELF}`,
    admission: opts.admission,
    nc,
    ledger,
    pids() {
      const out: Record<string, number> = {};
      if (mesh.gateway?.child.pid) out.gateway = mesh.gateway.child.pid;
      const b = mesh.bridges.get(SESSION)?.child.pid;
      if (b) out.bridge = b;
      const g = mesh.services.find((s) => s !== mesh.gateway && ![...mesh.bridges.values()].includes(s))?.child.pid;
      if (opts.admission === 'service' && g) out.guard = g;
      for (const name of spread) {
        const pid = mesh.bridges.get(name)?.child.pid;
        if (pid) out[`bridge_${name}`] = pid;
      }
      return out;
    },
    preload: (from, count, window) => preloadShelf(ledger, from, count, window),
    async admits() {
      try {
        if (opts.admission === 'off') return 0;
        if (opts.admission === 'local') return (await (await jetstreamManager(nc)).streams.info(`KV_${BUCKETS.guard}`)).state.last_seq;
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

/** Writes shelf tasks [from, from+count) straight into the ledger, `window` writes in flight. */
export async function preloadShelf(ledger: Ledger, from: number, count: number, window = 256): Promise<void> {
  let next = from;
  const end = from + count;
  const worker = async () => {
    while (next < end) {
      const i = next++;
      const created = await ledger.create(ledger.key(MACHINE, SHELF, shelfMessageId(i)), shelfEntry(i));
      if (!created) throw new Error(`shelf task ${i} exists already`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, worker));
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
