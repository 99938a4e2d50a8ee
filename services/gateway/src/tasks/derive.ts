/**
 * Derived, not claimed (docs/security.md): what a request's metadata may say and what the gateway
 * works out itself from what the mesh (the device) and the ledger prove.
 *
 *   - Metadata under `shrooms/` that the mesh writes (device, depth, chain, held, schedule, …) is
 *     dropped from what a client sends; a client may set only the keys in CLIENT_KEYS. A proven
 *     occurrence of a schedule has its schedule keys, claim and reply-to from the schedule record.
 *   - The asking agent for the budget is the claimed `MACHINE/SESSION` only when MACHINE is the
 *     asking device itself and that session has a live signal; any other claim of one device counts
 *     against one shared `DEVICE/*` budget, so rotating the claim resets nothing.
 *   - The chain parent must exist in the ledger, be open, and be worked on by a session of the asking
 *     device; when the claimed session of the asking device is working on a task and the request
 *     names no parent, that task is the parent.
 */
import { META, ShroomsError, formatAgent, isTerminal, parseAgent, parseTaskName, withFields, type Metadata } from '@shrooms/protocol';
import type { Ledger, SignalField, SignalView } from '@shrooms/ledger';
import type { Caller } from './caller.js';

/** `shrooms/` keys a client may set: routing, its claim, its parent, its trace, a schedule request. */
export const CLIENT_KEYS: ReadonlySet<string> = new Set([
  META.session,
  META.from,
  META.parent,
  META.traceparent,
  META.at,
  META.repeat,
  META.replyTo,
]);

/** The metadata without the `shrooms/` keys only the mesh writes. */
export function clientMetadata(md: Metadata | undefined): Metadata | undefined {
  if (!md) return md;
  let out: Metadata | undefined;
  for (const k of Object.keys(md)) {
    if (!k.startsWith('shrooms/') || CLIENT_KEYS.has(k)) continue;
    out ??= { ...md };
    delete out[k];
  }
  return out ?? md;
}

/**
 * The metadata kept from a request that is not a proven occurrence: the client's own keys, plus —
 * for a proven result — which schedule and occurrence it answers (`scheduled.ts`).
 */
export function resultMetadata(proof: { kind: 'occurrence' | 'result' } | undefined, md: Metadata | undefined): Metadata | undefined {
  const kept = clientMetadata(md);
  if (proof?.kind !== 'result' || !md) return kept;
  const out: Metadata = { ...kept };
  for (const k of [META.schedule, META.occurrence]) if (md[k] !== undefined) out[k] = md[k];
  return out;
}

/**
 * The metadata of a proven occurrence: the client's own keys, less what its schedule says instead —
 * the claim (`shrooms/from`), `reply_to` and `parent` — then `derived`, what the schedule's record
 * gives it (`scheduled.ts`: schedule, occurrence, scheduled_by, from, reply_to).
 */
export function occurrenceMetadata(derived: Metadata, md: Metadata | undefined): Metadata {
  const out: Metadata = { ...clientMetadata(md) };
  for (const k of [META.from, META.replyTo, META.parent]) delete out[k];
  return withFields(out, derived);
}

/**
 * The live signal of the session a caller claims to be, when that session is on the caller's own
 * machine (the only sessions a device can speak for); null otherwise.
 */
export async function claimedSignal(signals: SignalField, caller: Caller): Promise<SignalView | null> {
  const claim = caller.from ? parseAgent(caller.from) : undefined;
  if (!claim || claim.machine !== caller.machine) return null;
  return signals.get(claim.machine, claim.session);
}

/** Who the budget counts: a proven session of the asking device, or that device's shared `DEVICE/*`. */
export function budgetAgent(caller: Caller, signal: SignalView | null): string | undefined {
  if (!caller.from) return undefined;
  return signal ? caller.from : `${caller.machine}/*`;
}

export interface Chain {
  parent?: string;
  depth: number;
  chain: string[];
  metadata: Metadata;
}

const ROOT: Chain = { depth: 0, chain: [], metadata: { [META.depth]: 0, [META.chain]: [] } };

/**
 * Parent, depth and chain from the ledger. `working` is the task the claimed session of the asking
 * device is working on now (from its signal), used when the request names no parent; `root` is a
 * schedule's send, which starts a chain whatever its owner is doing.
 */
export async function chainOf(
  ledger: Ledger,
  caller: Caller,
  named: unknown,
  opts: { working?: string; root?: boolean } = {},
): Promise<Chain> {
  if (opts.root) return ROOT;
  const given = typeof named === 'string' ? named.trim() : '';
  if (!given && opts.working) {
    // The signal may lag the task's end by a moment: a derived parent that is no longer open is
    // no parent (a named one is refused instead).
    return chainOf(ledger, caller, opts.working).catch((err: unknown) => {
      if (err instanceof ShroomsError && err.key === 'CHAIN_PARENT_INVALID') return ROOT;
      throw err;
    });
  }
  const parentName = given;
  if (!parentName) return ROOT;
  const p = parseTaskName(parentName);
  if (!p || !p.machine)
    throw new ShroomsError('INVALID_PARAMS', `shrooms/parent must be MACHINE/SESSION:ID, got ${JSON.stringify(parentName.slice(0, 200))}`);
  const refuse = (why: string) =>
    new ShroomsError('CHAIN_PARENT_INVALID', `shrooms/parent ${parentName.slice(0, 200)} ${why}`, { parent: parentName.slice(0, 200) });
  if (p.machine !== caller.machine) throw refuse(`is worked on by ${p.machine}, not by the asking device ${caller.device}`);
  const parent = await ledger.get(ledger.key(p.machine, p.session, p.messageId));
  if (!parent) throw refuse('is not a task in the ledger');
  if (isTerminal(parent.entry.task.status.state)) throw refuse(`is already ${parent.entry.task.status.state}`);
  const pm = parent.entry.task.metadata ?? {};
  const depth = (Number(pm[META.depth]) || 0) + 1;
  const chain = [
    ...(Array.isArray(pm[META.chain]) ? (pm[META.chain] as string[]) : []),
    formatAgent({ machine: p.machine, session: p.session }),
  ];
  const name = `${p.machine}/${p.session}:${p.messageId}`;
  return { parent: name, depth, chain, metadata: { [META.parent]: name, [META.depth]: depth, [META.chain]: chain } };
}
