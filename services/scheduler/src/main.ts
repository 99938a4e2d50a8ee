/** The scheduler process: config, logger, telemetry, NATS, buildScheduler, health; drain on shutdown. */
import {
  connectNats,
  createLogger,
  drainNats,
  healthKey,
  initTelemetry,
  loadConfig,
  natsHealthChecks,
  natsLiveness,
  onShutdown,
  redactConfig,
  startHealthServer,
  subscriptionsTaken,
} from '@shrooms/runtime';
import { buildScheduler } from './app.js';
import { SchedulerConfigSchema } from './config.js';

export async function runScheduler(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(SchedulerConfigSchema, env);
  const log = createLogger('scheduler', config.LOG_LEVEL, undefined, config.LOG_FORMAT);
  log.info({ config: redactConfig(config) }, 'starting');
  const stopTelemetry = await initTelemetry('shrooms-scheduler', env);
  const nc = await connectNats(config, log, `scheduler ${config.SCHEDULER_REPLICA_ID}`);
  const scheduler = await buildScheduler({ nc, log, config });
  await scheduler.start();
  const health = await startHealthServer({
    host: config.HEALTH_HOST,
    port: config.HEALTH_PORT,
    live: natsLiveness(nc),
    checks: natsHealthChecks({ nc, kv: scheduler.store.kv, key: healthKey(config.SHROOMS_MACHINE, 'scheduler'), name: 'schedules' }),
    log,
  });
  await subscriptionsTaken(nc);
  log.info(
    { replica: config.SCHEDULER_REPLICA_ID, missed: config.SCHEDULER_MISSED, graceMs: config.SCHEDULER_GRACE_MS },
    'scheduler ready',
  );
  onShutdown(log, async () => {
    await scheduler.stop();
    await health?.close();
    await drainNats(nc, log);
    await stopTelemetry();
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runScheduler().catch((err) => {
    process.stderr.write(`scheduler failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
