/** The scheduler process: config, logger, NATS, buildScheduler, start; drain on shutdown. */
import { connectNats, createLogger, loadConfig, onShutdown, redactConfig } from '@shrooms/runtime';
import { buildScheduler } from './app.js';
import { SchedulerConfigSchema } from './config.js';

export async function runScheduler(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(SchedulerConfigSchema, env);
  const log = createLogger('scheduler', config.LOG_LEVEL);
  log.info({ config: redactConfig(config) }, 'starting');
  const nc = await connectNats(config, log, `scheduler ${config.SCHEDULER_REPLICA_ID}`);
  const scheduler = await buildScheduler({ nc, log, config });
  await scheduler.start();
  log.info({ replica: config.SCHEDULER_REPLICA_ID, missed: config.SCHEDULER_MISSED, graceMs: config.SCHEDULER_GRACE_MS }, 'scheduler ready');
  onShutdown(log, async () => {
    await scheduler.stop();
    await nc.drain();
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runScheduler().catch((err) => {
    process.stderr.write(`scheduler failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
