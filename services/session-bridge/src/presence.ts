/**
 * Keeps the session's signal alive in the field: renewed every third of its ttl and on each change
 * (at most every 200 ms). When the bridge stops, the signal is withdrawn; when it dies, it fades.
 */
import { hostname } from 'node:os';
import type { SignalField } from '@shrooms/ledger';
import type { Signal } from '@shrooms/protocol';
import type { Logger } from '@shrooms/runtime';
import type { Bridge, PresenceState } from './bridge/bridge.js';
import type { BridgeConfig } from './config.js';

/**
 * A stop waits this long for the withdrawal; past it (NATS gone or slow) the signal is left to fade
 * by its ttl, as a dead bridge's does, rather than hold the stop for the client's 5 s timeout.
 */
const WITHDRAW_WAIT_MS = 1_000;

/** How often a live bridge renews its signal: every third of its ttl, at most once a second. */
export const renewEveryMs = (ttlMs: number): number => Math.max(1000, Math.floor(ttlMs / 3));

/** This bridge process, as its signal names it. */
export const INSTANCE = { host: hostname(), pid: process.pid };

/** What the bridge says of its session; without `p` (its claim, before the bridge runs) `starting`, nothing open. */
export function sessionSignal(config: BridgeConfig, p?: PresenceState): Omit<Signal, 'at' | 'ttlMs'> {
  const h = p?.harness;
  const state = !p || h === 'starting' || h === 'dead' ? 'starting' : h === 'waiting' ? 'waiting' : p.busy ? 'working' : 'idle';
  return {
    machine: config.SHROOMS_MACHINE,
    session: config.BRIDGE_SESSION,
    // An ACP session says which agent: acp:gemini, acp:opencode, acp:command.
    harness:
      config.BRIDGE_HARNESS === 'acp'
        ? `acp:${config.BRIDGE_ACP_COMMAND ? 'command' : (config.BRIDGE_ACP_AGENT ?? '?')}`
        : config.BRIDGE_HARNESS,
    state,
    cwd: config.BRIDGE_CWD,
    gatewayUrl: config.SHROOMS_GATEWAY_URL,
    openTasks: p?.openTasks ?? 0,
    queuedTasks: p?.queuedTasks ?? 0,
    ...(p?.lastSpokeAt ? { lastSpokeAt: p.lastSpokeAt } : {}),
    autoApprove: config.BRIDGE_AUTO_APPROVE || config.BRIDGE_HARNESS === 'pi',
    remindersStopped: p?.remindersStopped ?? false,
    ...(p?.task ? { task: p.task } : {}),
    instance: INSTANCE,
  };
}

/**
 * Renews the bridge's claim (single.ts) until its presence takes over: a long start — the recovery
 * of a long session, an agent slow to come up — would otherwise let the claim age past the wait of
 * another bridge starting for the session, which would then take it. Returns the stop.
 */
export function holdClaim({ signals, config, log }: { signals: SignalField; config: BridgeConfig; log: Logger }): () => void {
  const timer = setInterval(
    () => void signals.renew(sessionSignal(config)).catch((err) => log.warn({ err }, 'signal renew failed')),
    renewEveryMs(signals.ttlMs),
  );
  timer.unref();
  return () => clearInterval(timer);
}

export async function startPresence(
  bridge: Bridge,
  { signals, config, log }: { signals: SignalField; config: BridgeConfig; log: Logger },
): Promise<() => Promise<void>> {
  let last = 0;
  let pending: NodeJS.Timeout | undefined;
  const renew = () => {
    last = Date.now();
    return signals.renew(sessionSignal(config, bridge.presence())).catch((err) => log.warn({ err }, 'signal renew failed'));
  };
  const onChange = () => {
    if (pending) return;
    pending = setTimeout(
      () => {
        pending = undefined;
        void renew();
      },
      Math.max(0, 200 - (Date.now() - last)),
    );
  };
  const unsubscribe = bridge.onChange(onChange);
  const timer = setInterval(() => void renew(), renewEveryMs(signals.ttlMs));
  timer.unref();
  await renew(); // the session is known to the mesh before the bridge says it is ready
  return async () => {
    clearInterval(timer);
    if (pending) clearTimeout(pending);
    unsubscribe();
    let wait: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<'late'>((resolve) => (wait = setTimeout(() => resolve('late'), WITHDRAW_WAIT_MS)));
    const withdrawn = signals.withdraw(bridge.machine, bridge.session).then(
      () => 'done' as const,
      () => 'failed' as const,
    );
    const outcome = await Promise.race([withdrawn, gaveUp]);
    clearTimeout(wait);
    if (outcome !== 'done') log.info({ outcome }, 'signal not withdrawn at stop: it fades by its ttl');
  };
}
