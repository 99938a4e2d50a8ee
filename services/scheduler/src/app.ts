/**
 * The scheduler, assembled: store, engine, service. Nothing here reads the environment or listens
 * on its own; `main.ts` wires it, tests build it with their own connection and config.
 */
import type { Logger, NatsConnection, Service } from '@shrooms/runtime';
import type { SchedulerConfig } from './config.js';
import { gatewayResolver, type ResolveGateway } from './deliver/gateways.js';
import { ledgerReader } from './deliver/results.js';
import { a2aSender, type SendMessage } from './deliver/send.js';
import { Engine } from './engine.js';
import { schedulerOps, startSchedulerService, type SchedulerOps } from './service.js';
import { ScheduleStore } from './store.js';

export interface SchedulerDeps {
  nc: NatsConnection;
  log: Logger;
  config: SchedulerConfig;
  /** Overrides for tests: how occurrences are sent, and where gateways are. */
  send?: SendMessage;
  resolveGateway?: ResolveGateway;
  now?: () => number;
}

export interface Scheduler {
  store: ScheduleStore;
  engine: Engine;
  ops: SchedulerOps;
  /** Loads schedules, starts ticking and registers the NATS service. */
  start(): Promise<void>;
  /** Deregisters, then lets sends in flight finish and be recorded. */
  stop(): Promise<void>;
}

export async function buildScheduler({ nc, log, config, send, resolveGateway, now }: SchedulerDeps): Promise<Scheduler> {
  const store = await ScheduleStore.open(nc, { replicas: config.SHROOMS_REPLICAS });
  const engine = new Engine({
    store,
    send: send ?? a2aSender({ timeoutMs: config.SCHEDULER_SEND_TIMEOUT_MS }),
    resolveGateway:
      resolveGateway ??
      gatewayResolver(nc, {
        machine: config.SHROOMS_MACHINE,
        localUrl: config.SHROOMS_GATEWAY_URL,
        staticMap: config.SHROOMS_GATEWAYS,
      }),
    readTask: ledgerReader(nc),
    announce: {
      machine: config.SHROOMS_MACHINE,
      write: () => store.announce(config.SHROOMS_MACHINE, config.SCHEDULER_REPLICA_ID),
    },
    log,
    config,
    ...(now ? { now } : {}),
  });
  const ops = schedulerOps(store, engine, config, log, now);
  let service: Service | undefined;
  return {
    store,
    engine,
    ops,
    async start() {
      await engine.start();
      service = await startSchedulerService(nc, ops, config.SHROOMS_MACHINE, log);
    },
    async stop() {
      await service?.stop().catch(() => {});
      await engine.stop();
    },
  };
}
