/**
 * Retries a JetStream call through the few seconds a cluster needs to elect a new stream leader
 * (or to settle two replicas creating the same bucket at once): only on errors that say so, with
 * backoff, bounded in attempts. Anything else is thrown at once.
 */
const NOT_DONE = /jetstream is not enabled|no responders|not current|stream is being|503/i;
const TRANSIENT = /jetstream is not enabled|no responders|timeout|leader|not current|insufficient resources|stream is being|503/i;

const text = (err: Error) => `${err.message} ${(err as { code?: unknown }).code ?? ''} ${String((err as { cause?: unknown }).cause ?? '')}`;

/** The call may be retried: it failed, or (a timeout) it may not have happened. For reads. */
export function isTransientJetStreamError(err: unknown): boolean {
  return err instanceof Error && TRANSIENT.test(text(err));
}

/** The call surely did not happen (no leader, no responders): a write may be sent again. */
export function isUndoneJetStreamError(err: unknown): boolean {
  return err instanceof Error && NOT_DONE.test(text(err));
}

/** Defaults: 8 attempts, 100 ms doubling to at most 2 s between them (about 8 s in all). */
export async function retryJetStream<T>(
  fn: () => Promise<T>,
  opts: { attempts?: number; firstDelayMs?: number; maxDelayMs?: number; retryIf?: (err: unknown) => boolean } = {},
): Promise<T> {
  const retryIf = opts.retryIf ?? isTransientJetStreamError;
  const attempts = opts.attempts ?? 8;
  let delay = opts.firstDelayMs ?? 100;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts || !retryIf(err)) throw err;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 2_000);
    }
  }
}
