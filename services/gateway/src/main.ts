/** The gateway process: config, logger, NATS, ledger, app; listen; drain on shutdown. */
import { Ledger, SignalField } from '@shrooms/ledger';
import {
  addService,
  connectNats,
  createLogger,
  drainNats,
  loadConfig,
  NatsLink,
  onShutdown,
  redactConfig,
  subscriptionsTaken,
} from '@shrooms/runtime';
import { BUCKETS, SERVICE_NAMES } from '@shrooms/protocol';
import { buildApp } from './app.js';
import { GatewayConfigSchema, listenHosts, publicUrl } from './config.js';
import { bindPolicy, identityOptions, loadIdentity } from './identity/index.js';
import { listenAlso } from './listen.js';
import { localGuard, natsGuard } from './tasks/guard.js';
import { openAdmission } from '@shrooms/admission';
import { scheduleFromMessage } from './tasks/schedule.js';
import { scheduleProof } from './tasks/scheduled.js';
import { scheduleClient } from '@shrooms/client';
import { VERSION } from './cards/cards.js';

export async function runGateway(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(GatewayConfigSchema, env);
  const log = createLogger('gateway', config.LOG_LEVEL, undefined, config.LOG_FORMAT);
  log.info({ config: redactConfig(config) }, 'starting');
  const nc = await connectNats(config, log, `gateway ${config.SHROOMS_MACHINE}`);
  const limits = {
    taskBytes: config.LIMIT_TASK_BYTES,
    finishedRetentionMs: config.LIMIT_FINISHED_RETENTION_MS,
    retainedTasks: config.LIMIT_RETAINED_TASKS,
  };
  // The gateway owns the bucket's configuration: its retained-task limit and retention are this gateway's settings.
  // Requests are refused at once while NATS is away (app.ts), and so are the ledger's reads and
  // writes of the gateway's own upkeep (the expiry sweep, the index) instead of their minute of retries.
  const link = new NatsLink(nc, { who: 'this gateway' });
  const ledger = await Ledger.open(nc, { replicas: config.SHROOMS_REPLICAS, limits, owner: true, link });
  const signals = await SignalField.open(nc, { replicas: config.SHROOMS_REPLICAS });
  for (const [bucket, state] of [
    [BUCKETS.tasks, ledger.hardening],
    [BUCKETS.signals, signals.hardening],
  ] as const) {
    // Opening hardened them; one an older version made soft, replicated, on 2.9 could not be.
    if (state?.startsWith('left soft'))
      log.warn(
        { bucket, state },
        'this bucket still accepts rollups and purges (made by an older version); recreate it or run nats-server 2.10+ (docs/security.md)',
      );
  }
  // A replicated bucket on nats-server 2.9 keeps the limits it was made with; they are what holds.
  if (ledger.limitsLeft && (ledger.retained !== limits.retainedTasks || ledger.retentionMs !== limits.finishedRetentionMs))
    log.warn(
      { bucket: BUCKETS.tasks, retainedTasks: ledger.retained, retentionMs: ledger.retentionMs },
      `the ledger keeps ${ledger.retained ?? '?'} tasks, each ${ledger.retentionMs} ms after its last write, not LIMIT_RETAINED_TASKS=${limits.retainedTasks} and LIMIT_FINISHED_RETENTION_MS=${limits.finishedRetentionMs}: its bucket could not be changed (replicated on nats-server 2.9); change it with nats stream edit KV_${BUCKETS.tasks} (docs/operators.md)`,
    );
  const hosts = listenHosts(config);
  for (const host of hosts) {
    const bind = bindPolicy(host, { meshAddresses: config.SHROOMS_MESH_ADDRESSES, allowUnsafe: config.GATEWAY_ALLOW_UNSAFE_BIND });
    if (!bind.allowed) throw new Error(bind.reason);
    if (bind.unsafe) log.warn({ host }, bind.reason);
  }
  const identity = await loadIdentity(identityOptions(config, log));
  // Admission in this process reads signals through the gateway's field (followed: from memory).
  const readSignal = (machine: string, session: string) => signals.get(machine, session).catch(() => null);
  const admission = config.GATEWAY_GUARD === 'local' ? await openAdmission({ nc, log, config, readSignal }) : undefined;
  const guard = admission
    ? localGuard(admission)
    : config.GATEWAY_GUARD === 'service'
      ? natsGuard(nc, config.LIMIT_GUARD_TIMEOUT_MS)
      : undefined;
  const gw = await buildApp({
    nc,
    link,
    log,
    config,
    ledger,
    signals,
    guard,
    scheduled: scheduleProof(nc),
    identify: (addr) => identity.identify(addr),
    schedule: scheduleFromMessage(nc, config.LIMIT_DELIVERY_ACK_MS),
    schedules: scheduleClient(nc, { timeoutMs: config.LIMIT_DELIVERY_ACK_MS }),
  });
  await gw.app.listen({ host: hosts[0]!, port: config.GATEWAY_PORT });
  const port = (gw.app.server.address() as { port: number }).port;
  const extra = await listenAlso(gw.app, hosts.slice(1), port);
  const url = publicUrl(config, port);
  const svc = await addService(nc, {
    name: SERVICE_NAMES.gateway,
    version: VERSION,
    description: `A2A gateway of ${config.SHROOMS_MACHINE}`,
    metadata: { machine: config.SHROOMS_MACHINE, url },
  });
  await subscriptionsTaken(nc);
  log.info({ url }, `gateway listening on ${url}`);
  // The open tasks (for the expiry sweep) are found once the gateway is up, not before: that pass
  // reads every retained task, and what the start waits for must not queue behind it (live.ts).
  gw.live.openKnown().catch((err: unknown) => log.warn({ err }, 'finding the open tasks failed; the next sweep tries again'));
  onShutdown(log, async () => {
    identity.close();
    for (const server of extra) server.close();
    await gw.close();
    // After the last request: the loop-guard places it reserved ahead are given back.
    await admission?.close();
    await svc.stop();
    await drainNats(nc, log);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runGateway().catch((err) => {
    process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
