/**
 * One bridge per session. Bridges take their session's deliveries without a queue group, so a
 * second bridge started for a session (a second terminal, `bridge --session demo` beside `up`'s)
 * took every task too: both wrote it, both ran it in their own agent. A bridge now looks at its
 * session's signal before it takes anything: none (or withdrawn, or faded) — it is the only one; one
 * its host's process left behind (that pid gone, or its own: a restarted container) — likewise; one
 * of a live bridge process of its host refuses the start at once; any other is watched for a
 * renewal, which a live bridge makes every third of the ttl, and a renewal refuses the start. A
 * bridge that died on another host costs a start that one wait.
 */
import type { SignalField, SignalView } from '@shrooms/ledger';
import { pidHasArg, pidRuns } from '@shrooms/runtime';

export interface Instance {
  host: string;
  pid: number;
}

export interface OnlyBridgeOptions {
  machine: string;
  session: string;
  self: Instance;
  /** How long to watch a signal for a renewal (a third of the ttl, and some). */
  waitMs: number;
  pollMs?: number;
}

/** Resolves when no other bridge serves the session; throws an Error naming the one that does. */
export async function assertOnlyBridge(signals: Pick<SignalField, 'get'>, o: OnlyBridgeOptions): Promise<void> {
  const first = await signals.get(o.machine, o.session);
  if (!first) return;
  const here = onThisHost(first, o.self);
  if (here === 'gone') return;
  if (here === 'bridge') throw taken(o, first);
  const deadline = Date.now() + o.waitMs;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, o.pollMs ?? 250));
    const now = await signals.get(o.machine, o.session);
    if (!now) return;
    if (now.at !== first.at) throw taken(o, now);
  }
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

function taken(o: OnlyBridgeOptions, s: SignalView): Error {
  const where = s.instance
    ? ` (pid ${s.instance.pid} on ${s.instance.host}${s.cwd ? `, in ${s.cwd}` : ''})`
    : s.cwd
      ? ` (in ${s.cwd})`
      : '';
  return new Error(
    `${o.machine}/${o.session} already has a bridge${where}: two would both take its tasks. Stop that one first, or give this session another name.`,
  );
}
