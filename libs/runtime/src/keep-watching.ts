/**
 * A watch that ends by itself — its consumer lost with the NATS node that held it, or failed — is
 * started again, and again each second while it cannot start, until its owner stops it. The gateway's
 * task index, the bridge's session and the scheduler's schedules each follow a bucket this way.
 */
/** Starts one watch; it calls `ended` when it ends without being stopped. Returns its stop. */
export type OpenWatch = (ended: (err?: unknown) => void, again: boolean) => Promise<() => void>;

export interface KeepWatchingOptions {
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** What the log lines name ("the ledger watch of the session"). */
  what: string;
  /** After a restart: what was stored while no watch ran reached nobody, so the owner catches up. */
  back?: () => void;
  /** Wait before each new start (default 1 s). */
  delayMs?: number;
}

/**
 * Starts the watch (`again` false; its failure is thrown) and keeps it going (`again` true on each
 * later start). The returned stop ends the watch and every start still to come.
 */
export async function keepWatching(open: OpenWatch, opts: KeepWatchingOptions): Promise<() => void> {
  const delayMs = opts.delayMs ?? 1_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: (() => void) | undefined;
  // Each start gets its own `ended`: only the watch that runs now may start the next one.
  const start = async (again: boolean): Promise<void> => {
    let mine = true;
    const ended = (err?: unknown): void => {
      if (stopped || !mine) return;
      mine = false;
      opts.log.warn({ err }, `${opts.what} ended; starting it again`);
      later();
    };
    current = await open(ended, again);
    if (stopped) current();
  };
  const later = (): void => {
    timer = setTimeout(() => {
      if (stopped) return;
      start(true).then(
        () => {
          if (stopped) return;
          opts.log.info({}, `${opts.what} is back`);
          opts.back?.();
        },
        (err: unknown) => {
          opts.log.warn({ err }, `${opts.what} could not start again; trying again`);
          later();
        },
      );
    }, delayMs);
    timer.unref();
  };
  await start(false);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    current?.();
  };
}
