/**
 * The run's nats-server, started as `up` starts one: users with least-privilege permissions (from
 * the one generator, deploy/nats) and JetStream on. Ours' processes log in as `up`'s do — the
 * gateway as `gateway`, the guard as `guard`, each bridge as its session's own user — so the server
 * checks what ours publishes and subscribes to against those permissions, as it does for people.
 * The floor's responders, the load generator and the bench's own reads and preloads log in as
 * `admin`, which has no permissions to check: the floor stays plain NATS.
 */
import { join } from 'node:path';
import { prepareLocalNats, startNatsServer, tempDir, type LocalNats, type NatsServerHandle } from '@shrooms/testing';
import { stoppedOnInterrupt } from '../interrupt.js';

export interface BenchNats {
  server: NatsServerHandle;
  users: LocalNats;
  /** How long after a request its receiver may answer (the generator's REPLY_WINDOW, e.g. "5s"). */
  replyWindow: string;
  /** NATS_USER and NATS_PASS of `admin`, for the bench's own connections and children (login.ts). */
  adminEnv: Record<string, string>;
  /** The services' logins, as startMesh's `serviceEnv` takes them. */
  serviceEnv: Record<'gateway' | 'guard' | 'scheduler', Record<string, string>>;
  stop(): Promise<void>;
}

/** `sessions`: every session of `machine` a bridge will serve (each gets its own user). */
export async function startBenchNats(machine: string, sessions: string[]): Promise<BenchNats> {
  const dir = await tempDir('shrooms-bench-nats');
  try {
    const store = join(dir.path, 'jetstream');
    const users = await prepareLocalNats(dir.path, machine, sessions, { jetStreamDir: store });
    const generator = (await import(String(new URL('../../../deploy/nats/gen-permissions.mjs', import.meta.url)))) as {
      REPLY_WINDOW: string;
    };
    const server = await startNatsServer({ dataDir: store, args: ['-c', users.confFile], env: users.serverEnv, jetStreamInConfig: true });
    return stoppedOnInterrupt({
      server,
      users,
      replyWindow: generator.REPLY_WINDOW,
      adminEnv: users.login('admin'),
      serviceEnv: { gateway: users.login('gateway'), guard: users.login('guard'), scheduler: users.login('scheduler') },
      async stop() {
        try {
          await server.stop();
        } finally {
          await dir.remove();
        }
      },
    });
  } catch (err) {
    await dir.remove();
    throw err;
  }
}
