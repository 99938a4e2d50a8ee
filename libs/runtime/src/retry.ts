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

/** Error classes of the NATS client that mean the connection or JetStream was not there to answer. */
const OUTAGE_NAMES = new Set([
  'ClosedConnectionError',
  'DrainingConnectionError',
  'ConnectionError',
  'RequestError',
  'TimeoutError',
  'NoResponders',
  'JetStreamNotEnabled',
  'JetStreamStatusError',
]);

/**
 * A NATS or JetStream outage (by the client's error class, or a JetStream API 503), as opposed to
 * a refusal or a bug: callers answer it as NATS_UNAVAILABLE, which clients may retry.
 */
export function isNatsOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (OUTAGE_NAMES.has(err.name)) return true;
  const code = (err as { code?: unknown; api_error?: { code?: unknown } }).api_error?.code ?? (err as { code?: unknown }).code;
  if (err.name === 'JetStreamApiError' && (code === 503 || code === '503')) return true;
  return err.cause instanceof Error && err.cause !== err && isNatsOutage(err.cause);
}
