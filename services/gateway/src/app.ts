/**
 * Builds the gateway's fastify app; nothing here listens (main.ts does). Tests import `buildApp` and
 * use `app.inject()` or listen on a free port.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Ledger, SignalField } from '@shrooms/ledger';
import { NatsLink, type Logger, type NatsConnection } from '@shrooms/runtime';
import { callerOf, loopbackOnly, type Identify } from './a2a/caller.js';
import { authorize } from './authz/rules.js';
import { sessionName, type A2AContext } from './a2a/context.js';
import { clientErrorHandler, errorHandler, frameworkErrors, lingerOnEarlyAnswer } from './a2a/http-errors.js';
import { registerJsonRpc } from './a2a/jsonrpc.js';
import { registerRest } from './a2a/rest.js';
import { SseStreams } from './a2a/sse.js';
import { registerCards } from './cards/routes.js';
import { listenHosts, type GatewayConfig } from './config.js';
import { Doors, registerDoors } from './doors/doors.js';
import { registerDashboard } from './dashboard/routes.js';
import { registerHealth } from './health.js';
import { LiveTasks } from './tasks/live.js';
import { TaskService, type GuardPort } from './tasks/service.js';
import type { ScheduleProof } from './tasks/scheduled.js';

export interface GatewayDeps {
  nc: NatsConnection;
  log: Logger;
  config: GatewayConfig;
  ledger: Ledger;
  signals: SignalField;
  /** Its NATS connection followed (the ledger's too, when it was given it); default: one made here. */
  link?: NatsLink;
  /** Names devices from source addresses; default: only this machine (loopback). */
  identify?: Identify;
  guard?: GuardPort;
  /** Tells a schedule's occurrence from a claim (tasks/scheduled.ts); without it nothing is one. */
  scheduled?: ScheduleProof;
  schedule?: A2AContext['schedule'];
  schedules?: A2AContext['schedules'];
}

export interface Gateway {
  app: FastifyInstance;
  tasks: TaskService;
  live: LiveTasks;
  close(): Promise<void>;
}

function noRouteSchemas(): never {
  throw new Error('gateway routes take no fastify schema: validate with zod in the handler (see app.ts)');
}

export async function buildApp(deps: GatewayDeps): Promise<Gateway> {
  const { config, log } = deps;
  const machine = config.SHROOMS_MACHINE;
  const link = deps.link ?? new NatsLink(deps.nc, { who: 'this gateway' });
  const live = new LiveTasks(deps.ledger, machine, log, link);
  await live.start();
  // Every send looks its session up in the signal field: followed here, that look-up is no read.
  const stopSignals = await deps.signals.follow(machine, {
    onEnd: (err) => log.warn({ err }, 'signal watch ended; starting it again (meanwhile sessions are read)'),
  });
  const tasks = new TaskService({
    nc: deps.nc,
    ledger: deps.ledger,
    signals: deps.signals,
    live,
    machine,
    guard: deps.guard,
    scheduled: deps.scheduled,
    log,
    limits: {
      textBytes: config.LIMIT_TEXT_BYTES,
      partBytes: config.LIMIT_PART_BYTES,
      partsPerMessage: config.LIMIT_PARTS_PER_MESSAGE,
      metadataEntries: config.LIMIT_METADATA_ENTRIES,
      blockingWaitMs: config.LIMIT_BLOCKING_WAIT_MS,
      deliveryAckMs: config.LIMIT_DELIVERY_ACK_MS,
      blockingWaitsPerDevice: config.LIMIT_BLOCKING_WAITS_PER_DEVICE,
    },
  });
  const ctx: A2AContext = {
    tasks,
    identify: deps.identify ?? loopbackOnly(machine),
    sse: new SseStreams(
      {
        max: config.LIMIT_SSE_STREAMS,
        maxPerDevice: config.LIMIT_SSE_STREAMS_PER_DEVICE,
        heartbeatMs: config.GATEWAY_SSE_HEARTBEAT_MS,
        maxBufferedBytes: config.LIMIT_SSE_BUFFER_BYTES,
      },
      link,
    ),
    schedule: deps.schedule,
    schedules: deps.schedules,
    defaultSession: config.GATEWAY_DEFAULT_SESSION,
    sessionName,
  };

  const app: FastifyInstance = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: config.LIMIT_BODY_BYTES,
    // No log line per request; fastify 5 deprecates the top-level option for this (FSTDEP023,
    // printed at every start).
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    // What the HTTP layer refuses is answered from the error table too (see a2a/http-errors.ts).
    frameworkErrors,
    clientErrorHandler,
    // No route has a fastify schema (bodies are parsed with zod, answers sent as JSON): without
    // these, fastify builds its ajv and fast-json-stringify compilers at construction — ~130
    // modules an idle gateway held for nothing. A route given a schema fails at start, saying so.
    schemaController: { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } },
  });
  // Every body arrives as a string, whatever its content type, so parse errors are ours to answer
  // in the binding's own error shape.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.setErrorHandler(errorHandler(config.LIMIT_BODY_BYTES));
  app.addHook('onSend', lingerOnEarlyAnswer);
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({
      error: {
        code: 404,
        status: 'NOT_FOUND',
        message: `no route ${req.method} ${req.url.slice(0, 200)}`,
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'NOT_FOUND', domain: 'a2a-protocol.org' }],
      },
    }),
  );

  registerDoors(
    app,
    new Doors(ctx.identify, {
      machine,
      publicUrl: config.GATEWAY_PUBLIC_URL,
      addresses: [...listenHosts(config), ...config.SHROOMS_MESH_ADDRESSES],
      extraHosts: config.GATEWAY_ALLOWED_HOSTS,
    }),
    link,
  );
  registerCards(app, ctx, config.GATEWAY_PUBLIC_URL);
  registerJsonRpc(app, ctx);
  registerRest(app, ctx);
  registerHealth(app, deps);
  registerDashboard(app, { ...deps, tasks, identify: ctx.identify });
  // Who is on the mesh: the list_agents rule (the door has refused every other source).
  app.get('/agents', async (req) => {
    authorize('list_agents', callerOf(req, ctx.identify, undefined), { machine });
    return { agents: await deps.signals.list() };
  });

  const sweep = setInterval(
    () => void tasks.sweepExpired(config.LIMIT_TASK_EXPIRY_MS).catch((err) => log.warn({ err }, 'expiry sweep failed')),
    config.GATEWAY_EXPIRY_SWEEP_MS,
  );
  sweep.unref();
  // The listing indexes follow the ledger's retention, the bucket's own (its expiry tells no watch): once a minute.
  const prune = setInterval(() => void live.pruneByRetention(), 60_000);
  prune.unref();

  return {
    app,
    tasks,
    live,
    async close() {
      clearInterval(sweep);
      clearInterval(prune);
      live.close();
      stopSignals();
      await app.close();
    },
  };
}
