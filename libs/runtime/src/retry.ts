/**
 * Retries a JetStream call through the few seconds a cluster needs to elect a new stream leader:
 * only on errors whose class or code says so (never their text), with backoff, bounded in
 * attempts. Anything else is thrown at once.
 */
import { PermissionViolationError, TimeoutError } from '@nats-io/nats-core';
import { JetStreamApiError } from '@nats-io/jetstream';
import { RETRY_AFTER_SECONDS, ShroomsError } from '@shrooms/protocol';

/**
 * JetStream API errors (`err_code`) that say the cluster could not take the request just now:
 * 10004 incomplete results, 10005 no suitable peers for placement (a peer still offline while the
 * cluster forms: an R3 bucket created then), 10008 temporarily unavailable (no meta leader), 10009
 * cannot handle the request (not the leader), 10023 insufficient resources, 10041 a raft error (not
 * leader, not current).
 */
const UNAVAILABLE_API_CODES: ReadonlySet<number> = new Set([10004, 10005, 10008, 10009, 10023, 10041]);

/** The error and its causes, outermost first. */
function chain(err: unknown): Error[] {
  const out: Error[] = [];
  for (let e = err; e instanceof Error && !out.includes(e) && out.length < 8; e = e.cause) out.push(e);
  return out;
}

/** One link of the chain says the call failed for a while, not for good. */
function transientLink(e: Error): boolean {
  if (e instanceof TimeoutError) return true;
  // The client's NoRespondersError (also the cause of a RequestError, and of the JetStreamNotEnabled
  // a JetStream call turns it into): nobody was there to take it, e.g. no stream leader yet.
  if (e.name === 'NoResponders') return true;
  // A status message of a pull or publish (JetStreamStatusError): 503 is "no responders".
  if (e.name === 'JetStreamStatusError' && (e as { code?: unknown }).code === 503) return true;
  return e instanceof JetStreamApiError && UNAVAILABLE_API_CODES.has(e.code);
}

/** The call may be retried: it failed for a while, or (a timeout) it may not have happened. For reads. */
export function isTransientJetStreamError(err: unknown): boolean {
  return chain(err).some(transientLink);
}

/** The error, or one of its causes, is a JetStream API error with one of these codes (`err_code`). */
export function hasJetStreamApiCode(err: unknown, codes: number | ReadonlySet<number>): boolean {
  const wanted = (code: number) => (typeof codes === 'number' ? code === codes : codes.has(code));
  return chain(err).some((e) => e instanceof JetStreamApiError && wanted(e.code));
}

/**
 * The stream was made by another creator between this one's look and its create: nats-server 2.9
 * answers the loser 10058 (name in use) or 10065 (subjects overlap).
 */
const MADE_MEANWHILE_API_CODES: ReadonlySet<number> = new Set([10058, 10065]);
export const isMadeMeanwhile = (err: unknown): boolean => hasJetStreamApiCode(err, MADE_MEANWHILE_API_CODES);

/** For creating a stream that several processes may create at once: the loser's next try opens it. */
export const transientOrMadeMeanwhile = (err: unknown): boolean => isMadeMeanwhile(err) || isTransientJetStreamError(err);

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
 * JetStream API errors (`err_code`) that say JetStream is not there to serve: the codes of a cluster
 * between leaders (UNAVAILABLE_API_CODES), and 10039 / 10076, JetStream not enabled (for the
 * account), which a server answers while its JetStream is not up.
 */
const OUTAGE_API_CODES: ReadonlySet<number> = new Set([...UNAVAILABLE_API_CODES, 10039, 10076]);

/**
 * A NATS or JetStream outage (by the client's error class, or a JetStream API error whose code says
 * JetStream was not there), as opposed to a refusal or a bug: callers answer it as
 * NATS_UNAVAILABLE, which clients may retry. Never by the API error's HTTP-like status: JetStream
 * gives 503 also to a store that refused a message for good (10077, e.g. a full ledger's
 * "maximum messages exceeded"), which retrying cannot cure.
 */
export function isNatsOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  // Said already (a NatsLink's refusal, or one passed on from another process).
  if (err instanceof ShroomsError) return err.key === 'NATS_UNAVAILABLE';
  if (OUTAGE_NAMES.has(err.name)) return true;
  // The API error's `.code` is the JetStream err_code (10008 …); `.status` its HTTP-like status.
  if (err instanceof JetStreamApiError) return OUTAGE_API_CODES.has(err.code);
  return err.cause instanceof Error && err.cause !== err && isNatsOutage(err.cause);
}

/**
 * The one NATS_UNAVAILABLE: retryable, with its wait (`retryAfterSeconds`, errors.ts
 * RETRY_AFTER_SECONDS) in its details, so the wire error and `Retry-After` both say it. `why` says
 * what was kept; by default nothing was changed.
 */
export function natsUnavailable(
  why = 'NATS or JetStream did not answer; nothing was changed',
  details: Record<string, string | number> = {},
): ShroomsError {
  return new ShroomsError('NATS_UNAVAILABLE', why, { retryAfterSeconds: RETRY_AFTER_SECONDS.NATS_UNAVAILABLE!, ...details });
}

/** The server refused the request to this process's NATS user (the client may wrap it in a RequestError). */
export const isPermissionViolation = (err: unknown): boolean =>
  err instanceof PermissionViolationError || (err instanceof Error && err.cause instanceof PermissionViolationError);
