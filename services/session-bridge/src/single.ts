/**
 * One bridge per session. Bridges take their session's deliveries without a queue group, so a
 * second bridge started for a session (a second terminal, `bridge --session demo` beside `up`'s)
 * took every task too: both wrote it, both ran it in their own agent. A bridge now looks at its
 * session's signal before it takes anything: none (or withdrawn, or faded) — it is the only one; one
 * its host's process left behind (that pid gone, or its own: a restarted container) — likewise; one
 * of a live bridge process of its host refuses the start at once; any other is watched for a
 * renewal, which a live bridge makes every third of the ttl, and a renewal refuses the start. A
 * bridge that died on another host costs a start that one wait.
 *
 * Deciding is not enough: two bridges started at the same moment both read no signal. So the
 * decision is a claim — the bridge's first signal, written only if the key is still at the revision
 * the decision read (compare-and-set) — and a claim that finds the key moved decides again on what
 * moved it, which is then the other bridge's fresh signal.
 *
 * A bridge in standby (BRIDGE_STANDBY, `--standby`; what a systemd unit wants, where a refused start
 * would only be started again every few seconds until the start limit) does not exit on a served
 * session: it reads the signal again every `standbyPollMs` and claims the session once that bridge
 * stops (its signal withdrawn), dies on this host, or is not renewed from another.
 */
import type { SignalView } from '@shrooms/ledger';
import { pidHasArg, pidRuns, type Logger } from '@shrooms/runtime';

export interface Instance {
  host: string;
  pid: number;
}

/** The session's signal as a starting bridge reads and claims it (SignalField `read`, `claim`). */
export interface SignalSlot {
  read(): Promise<{ signal: SignalView | null; revision: number }>;
  /** Writes this bridge's first signal if the key is still at `revision`; false when another wrote first. */
  claim(revision: number): Promise<boolean>;
}

export interface OnlyBridgeOptions {
  machine: string;
  session: string;
  self: Instance;
  /** How long to watch a signal for a renewal (a third of the ttl, and some). */
  waitMs: number;
  pollMs?: number;
  /** Told why a start waits (the watch for a renewal, a standby). */
  log?: Pick<Logger, 'info'>;
  /** Wait for a served session to free instead of refusing the start. */
  standby?: boolean;
  /** How often a standby reads the signal again; default 1 s. */
  standbyPollMs?: number;
}

/** Claims that may find the key moved before the start gives up: each means another writer came first. */
const CLAIMS = 5;

/**
 * Resolves once this bridge's claim on the session is written (no other bridge serves it); throws
 * an Error naming the one that does.
 */
export async function claimSession(slot: SignalSlot, o: OnlyBridgeOptions): Promise<void> {
  let standingBy = false;
  for (let attempt = 0; attempt < CLAIMS;) {
    const seen = await slot.read();
    let revision: number | undefined;
    try {
      revision = await free(slot, seen, standingBy ? { ...o, log: undefined } : o);
    } catch (err) {
      if (!(err instanceof SessionTaken) || !o.standby) throw err;
      if (!standingBy)
        o.log?.info(
          `${o.machine}/${o.session} already has a bridge${where(err.signal)}: standing by, this bridge takes the session when that one stops`,
        );
      standingBy = true;
      await sleep(o.standbyPollMs ?? 1000);
      continue;
    }
    attempt++;
    if (revision !== undefined && (await slot.claim(revision))) {
      if (standingBy) o.log?.info(`${o.machine}/${o.session} is free: this bridge takes it over`);
      return;
    }
  }
  throw new Error(
    `${o.machine}/${o.session}: its signal changed under each of ${CLAIMS} claims: another bridge is starting for it. Stop it first, or give this session another name.`,
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The revision to claim the session at, when `seen` leaves it free; undefined when the key moved
 * without a renewal (withdrawn while watched: decide again); throws when a live bridge holds it.
 */
async function free(slot: SignalSlot, seen: Awaited<ReturnType<SignalSlot['read']>>, o: OnlyBridgeOptions): Promise<number | undefined> {
  if (!seen.signal) return seen.revision;
  const here = onThisHost(seen.signal, o.self);
  if (here === 'gone') return seen.revision;
  if (here === 'bridge') throw new SessionTaken(o, seen.signal);
  o.log?.info(
    `${o.machine}/${o.session} has the signal of a bridge${where(seen.signal)}: waiting up to ${o.waitMs} ms for a renewal, which a live bridge makes`,
  );
  const deadline = Date.now() + o.waitMs;
  while (Date.now() < deadline) {
    await sleep(o.pollMs ?? 250);
    const now = await slot.read();
    if (now.revision === seen.revision) continue;
    if (now.signal) throw new SessionTaken(o, now.signal);
    return undefined;
  }
  return seen.revision;
}

/**
 * What a signal's process is on this host: `gone` (that pid ended, or is this process: a container
 * started again), `bridge` (a live process whose arguments say bridge, where /proc tells), or
 * undefined (another host's, or a live pid that may have been reused: watched for a renewal).
 */
function onThisHost(s: SignalView, self: Instance): 'gone' | 'bridge' | undefined {
  const i = s.instance;
  if (!i || i.host !== self.host) return undefined;
  if (i.pid === self.pid || !pidRuns(i.pid)) return 'gone';
  return pidHasArg(i.pid, 'bridge') ? 'bridge' : undefined;
}

/** The process and folder a signal names, as ` (pid 1 on box, in /home/me/demo)`. */
function where(s: SignalView): string {
  if (s.instance) return ` (pid ${s.instance.pid} on ${s.instance.host}${s.cwd ? `, in ${s.cwd}` : ''})`;
  return s.cwd ? ` (in ${s.cwd})` : '';
}

/** The start's refusal: a live bridge serves the session (`signal`). */
class SessionTaken extends Error {
  constructor(
    o: OnlyBridgeOptions,
    readonly signal: SignalView,
  ) {
    super(
      `${o.machine}/${o.session} already has a bridge${where(signal)}: two would both take its tasks. Stop that one first, start this one with --standby (BRIDGE_STANDBY=1) to take over when it stops, or give this session another name.`,
    );
  }
}
