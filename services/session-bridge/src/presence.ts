/**
 * Keeps the session's signal alive in the field: renewed every third of its ttl and on each change
 * (at most every 200 ms). When the bridge stops, the signal is withdrawn; when it dies, it fades.
 */
import type { Bridge } from './bridge.js';

export async function startPresence(bridge: Bridge): Promise<() => Promise<void>> {
  const { signals, config, log } = bridge.d;
  let last = 0;
  let pending: NodeJS.Timeout | undefined;
  const state = () => {
    const h = bridge.harnessState;
    if (h === 'starting' || h === 'dead') return 'starting' as const;
    if (h === 'waiting') return 'waiting' as const;
    return bridge.busy ? ('working' as const) : ('idle' as const);
  };
  const renew = () => {
    last = Date.now();
    return signals
      .renew({
        machine: bridge.machine,
        session: bridge.session,
        harness: config.BRIDGE_HARNESS,
        state: state(),
        cwd: config.BRIDGE_CWD,
        gatewayUrl: config.GATEWAY_URL,
        openTasks: bridge.open.size,
        queuedTasks: bridge.queue.length + bridge.held.size,
        lastSpokeAt: bridge.lastSpokeAt,
        autoApprove: config.BRIDGE_AUTO_APPROVE || config.BRIDGE_HARNESS === 'pi',
        remindersStopped: bridge.remindersStopped,
      })
      .catch((err) => log.warn({ err }, 'signal renew failed'));
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
  bridge.on.change.add(onChange);
  const timer = setInterval(() => void renew(), Math.max(1000, Math.floor(signals.ttlMs / 3)));
  timer.unref();
  await renew(); // the session is known to the mesh before the bridge says it is ready
  return async () => {
    clearInterval(timer);
    if (pending) clearTimeout(pending);
    bridge.on.change.delete(onChange);
    await signals.withdraw(bridge.machine, bridge.session).catch(() => {});
  };
}
