/**
 * Whether this process's NATS connection is there, followed from the client's own status events.
 * A connection lost for longer than `graceMs` is an outage: callers answer NATS_UNAVAILABLE
 * (retryable, Retry-After) at once — not after the ledger's retries, which wait out a request
 * timeout per attempt (some 45 s per read, a minute per write, against a server that is gone) —
 * and whoever waits on NATS is told. The grace lets a client that lost one node of a cluster
 * reconnect to another without failing anything.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { ShroomsError } from '@shrooms/protocol';
import { natsUnavailable } from './retry.js';

/** How long the connection may be lost before it is an outage (ms). */
export const NATS_LINK_GRACE_MS = 1_000;

/** What a caller needs to know of the link: the ledger fails fast on it. */
export interface LinkState {
  /** How long the connection has been lost (ms) once that is an outage; undefined while it is there or within the grace. */
  readonly outageMs: number | undefined;
}

export class NatsLink implements LinkState {
  private lostAt?: number;
  private timer?: NodeJS.Timeout;
  private outage = false;
  private readonly listeners = new Set<(err: ShroomsError) => void>();
  private readonly who: string;

  /** `who` names this process in the refusal ("this gateway", "this bridge"). */
  constructor(nc: NatsConnection, { graceMs = NATS_LINK_GRACE_MS, who = 'this process' }: { graceMs?: number; who?: string } = {}) {
    this.who = who;
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
    clearTimeout(this.timer);
    this.lostAt ??= Date.now();
    this.declare();
  }

  private declare(): void {
    this.outage = true;
    const err = this.down!;
    for (const l of this.listeners) l(err);
  }

  get outageMs(): number | undefined {
    return this.outage ? Date.now() - this.lostAt! : undefined;
  }

  /** The refusal to answer while NATS is away; undefined while it is there (or within the grace). */
  get down(): ShroomsError | undefined {
    const ms = this.outageMs;
    if (ms === undefined) return undefined;
    return natsUnavailable(`${this.who} has lost its NATS connection (${Math.round(ms / 1000)} s ago); nothing was changed`);
  }

  /** Calls `fn` when an outage begins, until the returned function is called. */
  onOutage(fn: (err: ShroomsError) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}
