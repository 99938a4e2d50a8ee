/**
 * Whether this gateway's NATS connection is there, followed from the client's own status events.
 * A connection lost for longer than `graceMs` is an outage: requests are answered NATS_UNAVAILABLE
 * (retryable, Retry-After) at once — not after the ledger's retries, which wait out a request
 * timeout per attempt (some 45 s per read against a server that is gone) — and requests waiting on a
 * task are told. The grace lets a client that lost one node of a cluster reconnect to another
 * without failing anything.
 */
import type { ShroomsError } from '@shrooms/protocol';
import { natsUnavailable, type NatsConnection } from '@shrooms/runtime';

/** How long the connection may be lost before it is an outage (ms). */
export const NATS_LINK_GRACE_MS = 1_000;

export class NatsLink {
  private lostAt?: number;
  private timer?: NodeJS.Timeout;
  private outage = false;
  private readonly listeners = new Set<(err: ShroomsError) => void>();

  constructor(nc: NatsConnection, { graceMs = NATS_LINK_GRACE_MS }: { graceMs?: number } = {}) {
    void this.follow(nc, graceMs);
  }

  private async follow(nc: NatsConnection, graceMs: number): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' && this.lostAt === undefined) {
        this.lostAt = Date.now();
        this.timer = setTimeout(() => this.declare(), graceMs);
        this.timer.unref();
      } else if (s.type === 'reconnect') {
        clearTimeout(this.timer);
        this.lostAt = undefined;
        this.outage = false;
      }
    }
    // The connection is closed for good (drain at shutdown, or closed by hand).
    this.lostAt ??= Date.now();
    this.declare();
  }

  private declare(): void {
    this.outage = true;
    const err = this.down!;
    for (const l of this.listeners) l(err);
  }

  /** The refusal to answer while NATS is away; undefined while it is there (or within the grace). */
  get down(): ShroomsError | undefined {
    if (!this.outage) return undefined;
    const s = Math.round((Date.now() - this.lostAt!) / 1000);
    return natsUnavailable(`this gateway has lost its NATS connection (${s} s ago); nothing was changed`);
  }

  /** Calls `fn` when an outage begins, until the returned function is called. */
  onOutage(fn: (err: ShroomsError) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}
