/**
 * The guard process's life: config from the environment (parsed once), logger, NATS, buildGuard,
 * then wait; drain on SIGTERM/SIGINT. `main.ts` calls it; so can the `shrooms-agent guard` command.
 */
import { SERVICE_NAMES } from '@shrooms/protocol';
import {
  connectNats,
  createLogger,
  drainNats,
  natsHealthChecks,
  natsLiveness,
  onShutdown,
  redactConfig,
  startHealthServer,
  subscriptionsTaken,
} from '@shrooms/runtime';
import { loadGuardConfig } from './config.js';
import { buildGuard, type Guard } from './guard.js';

export async function runGuard(env: Record<string, string | undefined> = process.env): Promise<Guard> {
  const config = loadGuardConfig(env);
  const log = createLogger(SERVICE_NAMES.guard, config.LOG_LEVEL, undefined, config.LOG_FORMAT);
  log.info({ config: redactConfig(config) }, 'guard starting');
  const nc = await connectNats(config, log, SERVICE_NAMES.guard);
  const guard = await buildGuard({ nc, log, config });
  const health = await startHealthServer({
    host: config.HEALTH_HOST,
    port: config.HEALTH_PORT,
    log,
    checks: natsHealthChecks({ nc }),
    live: natsLiveness(nc),
  });
  await subscriptionsTaken(nc);
  log.info({ id: guard.service.info().id }, 'guard ready');
  onShutdown(log, async function stopGuard() {
    await health?.close();
    await guard.stop();
    await drainNats(nc, log);
  });
  return guard;
}
