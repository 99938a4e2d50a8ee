/**
 * The set-up most in-process tests share: a nats-server of their own and one connection to it,
 * taken down together.
 */
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, type NatsServerHandle, type StartNatsOptions } from './nats-server.js';

export interface NatsWithConnection {
  nats: NatsServerHandle;
  /** The server's URL (for more connections). */
  readonly url: string;
  nc: NatsConnection;
  /** Closes the connection, then stops the server. */
  stop(): Promise<void>;
}

/** Starts a nats-server (see `startNatsServer`) and connects to it, with `connection` options if given. */
export async function startNatsWithConnection(
  opts: StartNatsOptions & { connection?: Omit<ConnectionOptions, 'servers'> } = {},
): Promise<NatsWithConnection> {
  const { connection, ...server } = opts;
  const nats = await startNatsServer(server);
  let nc: NatsConnection;
  try {
    // Loaded here, not with the package: `up` imports this package for its local nats-server alone.
    const { connect } = await import('@nats-io/transport-node');
    nc = await connect({ ...connection, servers: nats.url });
  } catch (err) {
    await nats.stop();
    throw err;
  }
  return {
    nats,
    nc,
    get url() {
      return nats.url;
    },
    async stop() {
      await nc.close();
      await nats.stop();
    },
  };
}
