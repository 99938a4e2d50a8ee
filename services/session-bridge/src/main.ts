/** One bridge process: config, logger, NATS, ledger, harness, endpoints, presence; drain on stop. */
import { mkdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Ledger, SignalField } from '@shrooms/ledger';
import { keys, subjects } from '@shrooms/protocol';
import {
  connectNats,
  createLogger,
  drainNats,
  healthKey,
  loadConfig,
  type Logger,
  type NatsConnection,
  NatsLink,
  natsHealthChecks,
  natsLiveness,
  onShutdown,
  redactConfig,
  retryJetStream,
  startHealthServer,
  subscriptionsTaken,
} from '@shrooms/runtime';
import { ShroomsClient, clientOptionsFromEnv } from '@shrooms/client';
import { Bridge, type BridgeDeps } from './bridge/bridge.js';
import { startMcpHttpServer } from './mcp/http.js';
import { BridgeConfigSchema, harnessBaseEnv, watchdogFirstMs, type BridgeConfig } from './config.js';
import { registerBridgeService } from './endpoints.js';
import { toolWaitSeconds } from './harness/acp-agents.js';
import { harnessFactory } from './harness/index.js';
import { checkHarnessBinary, watchGateway } from './preflight.js';
import { holdClaim, INSTANCE, renewEveryMs, sessionSignal, startPresence } from './presence.js';
import { claimSession } from './single.js';
import { systemNote } from './prompt.js';
import { parseLadder } from './watchdog/ladder.js';
import { Watchdog } from './watchdog/watchdog.js';
import { sessionCli, type CliCommand } from './session-cli.js';

/** `BRIDGE_STATE_DIR`, else `$XDG_STATE_HOME/shrooms/bridges/MACHINE-SESSION` (~/.local/state by default). */
export function bridgeStateDir(
  config: Pick<BridgeConfig, 'BRIDGE_STATE_DIR' | 'XDG_STATE_HOME' | 'SHROOMS_MACHINE' | 'BRIDGE_SESSION'>,
): string {
  const stateHome = config.XDG_STATE_HOME ?? join(homedir(), '.local', 'state');
  return config.BRIDGE_STATE_DIR ?? join(stateHome, 'shrooms', 'bridges', `${config.SHROOMS_MACHINE}-${config.BRIDGE_SESSION}`);
}

/**
 * `cli`: how to run the `shrooms-agent` the bridge was started from; with it the session's shell
 * has `shrooms-agent` on its PATH (session-cli.ts). `shrooms-agent bridge` passes its own.
 */
export async function runBridge(env: Record<string, string | undefined> = process.env, opts: { cli?: CliCommand } = {}): Promise<Bridge> {
  const config = loadConfig(BridgeConfigSchema, env);
  // The harness's own state lives outside the session's project (never in its git tree).
  const stateDir = bridgeStateDir(config);
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const logFile =
    config.BRIDGE_LOG_FILE === 'off' || config.BRIDGE_LOG_FILE === ''
      ? undefined
      : (config.BRIDGE_LOG_FILE ?? join(stateDir, 'bridge.log'));
  const log = createLogger(`bridge ${config.BRIDGE_SESSION}`, config.LOG_LEVEL, logFile, config.LOG_FORMAT);
  log.info({ config: redactConfig(config) }, 'starting');
  // Before anything connects: a missing CLI is said at once, not after NATS and the ledger.
  checkHarnessBinary(
    config.BRIDGE_HARNESS,
    { agent: config.BRIDGE_ACP_AGENT, agentCommand: config.BRIDGE_ACP_COMMAND },
    harnessBaseEnv(env),
  );
  if (
    !(await stat(config.BRIDGE_CWD).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    throw new Error(`the session's directory ${config.BRIDGE_CWD} does not exist (--cwd / BRIDGE_CWD)`);
  }
  const stopGatewayWatch = watchGateway(config.SHROOMS_GATEWAY_URL, log);
  // Replies to a bridge come to its session's own inbox prefix (under its machine's), so
  // permissions can scope them per machine or per session.
  const nc = await connectNats(config, log, `bridge ${config.SHROOMS_MACHINE}/${config.BRIDGE_SESSION}`, {
    inboxPrefix: subjects.bridgeInbox(config.SHROOMS_MACHINE, config.BRIDGE_SESSION),
  });
  // Bound, not created: the gateway owns the bucket, and a bridge's NATS user may not ask for its
  // stream info (it would list every machine's keys).
  // While NATS is away the ledger refuses at once (no minute-long write): a worker's task_update
  // is kept by the outbox and answered straight away.
  const link = new NatsLink(nc, { who: 'this bridge' });
  const ledger = await Ledger.bind(nc, {
    link,
    probeKey: keys.task(config.SHROOMS_MACHINE, config.BRIDGE_SESSION, 'ledger-probe'),
    limits: { taskBytes: config.LIMIT_TASK_BYTES },
  });
  const signals = await SignalField.open(nc, { replicas: config.SHROOMS_REPLICAS, ttlMs: config.BRIDGE_SIGNAL_TTL_MS });
  // Before it takes anything of the session (recovery, deliveries), it claims it (single.ts). Asked
  // as the ledger was bound above: on a cluster still electing the signal stream's leader a request
  // gets no answer, and is asked again (25 times) rather than ending the bridge.
  const retried = <T>(f: () => Promise<T>) => retryJetStream(f, { attempts: 25, maxDelayMs: 1_000 });
  await claimSession(
    {
      read: () => retried(() => signals.read(config.SHROOMS_MACHINE, config.BRIDGE_SESSION)),
      claim: (revision) => retried(() => signals.claim(sessionSignal(config), revision)),
    },
    {
      machine: config.SHROOMS_MACHINE,
      session: config.BRIDGE_SESSION,
      self: INSTANCE,
      // A live bridge renews within this; 2 s more for a renewal on its way.
      waitMs: renewEveryMs(config.BRIDGE_SIGNAL_TTL_MS) + 2000,
      standby: config.BRIDGE_STANDBY,
      log,
    },
  );
  const releaseClaim = holdClaim({ signals, config, log });
  try {
    return await serve({ config, env, opts, log, nc, ledger, signals, stateDir, releaseClaim, stopGatewayWatch });
  } catch (err) {
    // A start that fails after its claim takes the claim back: the session is not left looking served.
    releaseClaim();
    await signals.withdraw(config.SHROOMS_MACHINE, config.BRIDGE_SESSION).catch(() => {});
    throw err;
  }
}

interface Started {
  config: BridgeConfig;
  env: Record<string, string | undefined>;
  opts: { cli?: CliCommand };
  log: Logger;
  nc: NatsConnection;
  ledger: Ledger;
  signals: SignalField;
  stateDir: string;
  /** Stops renewing the claim: presence renews from then on. */
  releaseClaim: () => void;
  stopGatewayWatch: () => void;
}

/** The bridge of a claimed session: harness, tools, deliveries, presence, health; the stop on SIGTERM. */
async function serve({ config, env, opts, log, nc, ledger, signals, stateDir, releaseClaim, stopGatewayWatch }: Started): Promise<Bridge> {
  const harnessOptions: BridgeDeps['harnessOptions'] = {
    machine: config.SHROOMS_MACHINE,
    session: config.BRIDGE_SESSION,
    cwd: config.BRIDGE_CWD,
    stateDir,
    systemNote: systemNote(config.SHROOMS_MACHINE, config.BRIDGE_SESSION),
    mcpUrl: '',
    autoApprove: config.BRIDGE_AUTO_APPROVE,
    env: {
      ECHO_DELAY_MS: String(config.ECHO_DELAY_MS),
      ...(opts.cli
        ? await sessionCli(stateDir, opts.cli, {
            machine: config.SHROOMS_MACHINE,
            session: config.BRIDGE_SESSION,
            gatewayUrl: config.SHROOMS_GATEWAY_URL,
            path: env.PATH,
          })
        : {}),
    },
    baseEnv: harnessBaseEnv(env),
    model: config.BRIDGE_MODEL,
    acp: { agent: config.BRIDGE_ACP_AGENT, agentCommand: config.BRIDGE_ACP_COMMAND, mcp: config.BRIDGE_ACP_MCP },
  };
  // The session's own client on the mesh, for the cancel cascade (it cancels as the asker it was).
  const meshClient = new ShroomsClient(
    clientOptionsFromEnv(env, {
      machine: config.SHROOMS_MACHINE,
      gatewayUrl: config.SHROOMS_GATEWAY_URL,
      as: `${config.SHROOMS_MACHINE}/${config.BRIDGE_SESSION}`,
    }),
  );
  const bridge = new Bridge({
    nc,
    ledger,
    config,
    log,
    cancelElsewhere: (task, why) => meshClient.cancel(task, { why }),
    createHarness: await harnessFactory(config.BRIDGE_HARNESS),
    harnessOptions,
  });
  // The session's tools (MCP over HTTP on loopback), hosted here so they know the task at hand; their
  // waits end before an ACP agent's own tool timeout would (Gemini CLI's, Codex's).
  const maxWait =
    config.BRIDGE_HARNESS === 'acp'
      ? toolWaitSeconds({ agent: config.BRIDGE_ACP_AGENT, agentCommand: config.BRIDGE_ACP_COMMAND })
      : undefined;
  const mcp = await startMcpHttpServer({
    port: config.BRIDGE_MCP_PORT,
    context: {
      ...(maxWait !== undefined ? { maxWaitSeconds: maxWait } : {}),
      machine: config.SHROOMS_MACHINE,
      session: config.BRIDGE_SESSION,
      gatewayUrl: config.SHROOMS_GATEWAY_URL,
      env,
      // task_update's files are read from the session's folder only, not the bridge's own cwd.
      cwd: config.BRIDGE_CWD,
      currentTask: () => {
        const cur = bridge.current();
        return cur ? `${config.SHROOMS_MACHINE}/${cur.taskId}` : undefined;
      },
      traceparent: () => bridge.current()?.traceparent,
      // The worker's own task_update goes straight to the bridge, not out to the gateway and back.
      worker: {
        update: (taskId, status, text, parts) => bridge.workerUpdate(taskId, status, text, parts),
        asked: (taskId, child) => bridge.asked(taskId, child),
      },
    },
  });
  harnessOptions.mcpUrl = mcp.url;
  await bridge.start();
  const watchdog = new Watchdog(
    bridge,
    {
      firstMs: watchdogFirstMs(config),
      ladderMs: parseLadder(config.WATCHDOG_LADDER_MS),
      maxPerHour: config.WATCHDOG_MAX_PER_HOUR,
      hourMs: config.WATCHDOG_HOUR_MS,
    },
    config.WATCHDOG_TICK_MS,
  );
  watchdog.start();
  const svc = await registerBridgeService(bridge, { nc, config });
  releaseClaim();
  const stopPresence = await startPresence(bridge, { signals, config, log });
  const health = await startHealthServer({
    host: config.HEALTH_HOST,
    port: config.HEALTH_PORT,
    log,
    checks: natsHealthChecks({ nc, kv: ledger.kv, key: healthKey(config.SHROOMS_MACHINE, `bridge-${config.BRIDGE_SESSION}`) }),
    live: natsLiveness(nc),
  });
  await subscriptionsTaken(nc);
  log.info(
    { session: `${bridge.machine}/${bridge.session}`, harness: config.BRIDGE_HARNESS },
    `bridge ready for ${bridge.machine}/${bridge.session}`,
  );
  onShutdown(log, async () => {
    stopGatewayWatch();
    await health?.close();
    watchdog.stop();
    await stopPresence();
    await svc.stop();
    await bridge.stop();
    await mcp.close();
    await meshClient.close();
    await drainNats(nc, log);
  });
  return bridge;
}
