/**
 * For the bridge's unit tests: a real ledger on a real nats-server (one per test file), and tasks put
 * in it the way the gateway queues one while the bridge is away.
 */
import { Ledger, intake, type Stored } from '@shrooms/ledger';
import { startNatsWithConnection, type NatsWithConnection } from '@shrooms/testing';
import { afterAll, beforeAll } from 'vitest';

export interface RealLedger {
  readonly nats: NatsWithConnection;
  readonly ledger: Ledger;
  /** A new task of `session` on machine `box`, stored SUBMITTED and queued. */
  queued(session: string, id: string, text?: string): Promise<Stored>;
}

/** Starts the server before the file's tests and stops it after them; read the fields inside tests. */
export function useRealLedger(): RealLedger {
  let nats: NatsWithConnection | undefined;
  let ledger: Ledger | undefined;
  beforeAll(async () => {
    nats = await startNatsWithConnection();
    ledger = await Ledger.open(nats.nc);
  });
  afterAll(async () => nats?.stop());
  const real: RealLedger = {
    get nats() {
      if (!nats) throw new Error('the nats-server starts in beforeAll');
      return nats;
    },
    get ledger() {
      if (!ledger) throw new Error('the ledger opens in beforeAll');
      return ledger;
    },
    queued: (session, id, text = 'hi') =>
      intake(
        real.ledger,
        {
          machine: 'box',
          session,
          message: { messageId: id, role: 'ROLE_USER', parts: [{ text }] },
          origin: { device: 'laptop' },
          metadata: {},
        },
        { queued: true },
      ).then((r) => r.stored),
  };
  return real;
}
