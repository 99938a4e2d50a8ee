/**
 * What the bench starts beyond its own helpers — nats-server, ours' processes, `up`, their folders —
 * is stopped by the `finally` of whatever started it. A bench stopped by a signal to it alone (`kill`,
 * a supervisor, SIGINT to its pid) runs no `finally`: without this, nats-server, the gateway and the
 * bridges went on running and their folders stayed. Its IPC helpers go by themselves (their channel
 * closes). Ctrl-C in a terminal reaches the whole process group; this then removes the folders.
 */
const stops: (() => Promise<unknown>)[] = [];

/** Runs `stop` if the bench is interrupted before the returned function is called. */
export function onInterrupt(stop: () => Promise<unknown>): () => void {
  stops.push(stop);
  return () => {
    const i = stops.indexOf(stop);
    if (i >= 0) stops.splice(i, 1);
  };
}

/** `thing`, stopped if the bench is interrupted before its own `stop()` is called. */
export function stoppedOnInterrupt<T extends { stop(): Promise<unknown> }>(thing: T): T {
  const stop = thing.stop.bind(thing);
  const forget = onInterrupt(stop);
  (thing as { stop(): Promise<unknown> }).stop = () => {
    forget();
    return stop();
  };
  return thing;
}

/**
 * On SIGINT or SIGTERM: stops what is still running, the last started first, says so and exits
 * 130 or 143. A second signal meanwhile ends the bench at once (the default).
 */
export function stopOnSignals(log: (line: string) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log(`${signal}: stopping what the bench started (${stops.length})…`);
      void (async () => {
        for (const stop of stops.splice(0).reverse()) await stop().catch(() => {});
        log('stopped');
        process.exit(signal === 'SIGINT' ? 130 : 143);
      })();
    });
}
