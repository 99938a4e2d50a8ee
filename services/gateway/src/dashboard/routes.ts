/**
 * The dashboard on the gateway's own port: the page (`/dashboard`), its script and styles, JSON
 * under `/dashboard/api/`, and the live feed (`/dashboard/events`, SSE). Who may read and act is the
 * rules' (authz/rules.ts): reads follow `read` (and `list_agents` where agents are shown); actions
 * (cancel, release, reject, reminders) go through the same TaskService the A2A methods use, with the
 * viewer as the caller — so the owner's machine may do them all and another device only what the
 * A2A surface lets it (cancel a task it asked for).
 *
 * Over 300 lines: the dashboard's whole route table in one place (each route short: parse, ask the
 * rules, call the ledger or the TaskService), so who may do what is read in one file.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { META, ShroomsError, isTerminal, parseAgent, type TaskState } from '@shrooms/protocol';
import { authorize, type Action } from '../authz/rules.js';
import type { Ledger, SignalField } from '@shrooms/ledger';
import type { Logger, NatsConnection } from '@shrooms/runtime';
import { z } from 'zod';
import type { Identify } from '../a2a/caller.js';
import type { GatewayConfig } from '../config.js';
import type { TaskService } from '../tasks/service.js';
import { ACTION_HEADER, DashboardAccess, type Viewer } from './access.js';
import { BOOT, ENTRY, csp, asset, loadScripts, page, type Asset } from './assets/page.js';
import { STATE_FILTERS } from './board.js';
import { DashboardFeed } from './feed.js';
import { parseKey, toDetail, toRow } from './rows.js';
import { DashboardStreams, frame } from './streams.js';
import type * as Page from './wire.js';

export interface DashboardDeps {
  nc: NatsConnection;
  ledger: Ledger;
  signals: SignalField;
  log: Logger;
  config: GatewayConfig;
  tasks: TaskService;
  /** The A2A surface's own identity function: the dashboard follows the same rule. */
  identify: Identify;
}

const KeySchema = z.string().min(5).max(600);
const TasksQuerySchema = z.object({
  agent: z.string().max(200).optional(),
  state: z.enum(STATE_FILTERS).default('all'),
  q: z.string().max(200).optional(),
  cursor: z.string().max(1000).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
const ChainsQuerySchema = z.object({
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  limit: z.coerce.number().int().min(1).max(50).default(20),
});
const TaskActionSchema = z.object({ key: KeySchema });
const RemindersSchema = z.object({ agent: z.string().max(200), stop: z.boolean() });
const GuardWindowSchema = z.object({ agent: z.string().max(200), device: z.string().min(1).max(200).optional() });

function parse<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const r = schema.safeParse(input ?? {});
  if (!r.success) {
    const first = r.error.issues[0]!;
    throw new ShroomsError('INVALID_PARAMS', `${first.path.join('.') || 'request'}: ${first.message}`);
  }
  return r.data;
}

function jsonBody(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw new ShroomsError('PARSE_ERROR', 'the body is not valid JSON');
  }
}

export function registerDashboard(app: FastifyInstance, deps: DashboardDeps): void {
  const cfg = deps.config;
  if (cfg.DASHBOARD === 'off') return;
  const machine = deps.config.SHROOMS_MACHINE;
  const log = deps.log.child({ part: 'dashboard' });
  const access = new DashboardAccess(deps.identify);
  const streams = new DashboardStreams({
    max: cfg.DASHBOARD_MAX_STREAMS,
    heartbeatMs: deps.config.GATEWAY_SSE_HEARTBEAT_MS,
    maxBufferedBytes: cfg.DASHBOARD_STREAM_BUFFER_BYTES,
  });
  const feed = new DashboardFeed(
    { nc: deps.nc, ledger: deps.ledger, signals: deps.signals, log, machine, streams },
    { idleMs: cfg.DASHBOARD_IDLE_MS },
  );
  const scripts = loadScripts();
  if (!scripts) log.error({ dir: 'dist/browser/app' }, "the dashboard's script is not built (pnpm build): the page cannot run");
  const html = page(machine, scripts ?? new Map());
  const policy = csp(scripts ?? new Map());
  const { board } = feed;

  const fail = (req: FastifyRequest, reply: FastifyReply, err: unknown) => {
    const se = err instanceof ShroomsError ? err : new ShroomsError('INTERNAL', 'internal error');
    if (se.key === 'INTERNAL') req.log.error({ err }, 'dashboard request failed');
    return reply
      .code(se.spec.http)
      .header('cache-control', 'no-store')
      .send({ error: { key: se.key, code: se.spec.code, message: se.message } });
  };

  /** Reads, by the rules (`read`, and `list_agents` where agents are shown); the feed is started (once) first. */
  const read =
    (fn: (req: FastifyRequest, viewer: Viewer) => unknown | Promise<unknown>, actions: Action[] = ['read']) =>
    async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        const viewer = access.viewer(req);
        for (const a of actions) authorize(a, viewer, { machine });
        await feed.use();
        return reply.header('cache-control', 'no-store').send(await fn(req, viewer));
      } catch (err) {
        return fail(req, reply, err);
      }
    };

  /** Actions, from the page; TaskService applies the rule of each with the viewer as the caller. */
  const action = (fn: (body: unknown, viewer: Viewer) => Promise<unknown>) => async (req: FastifyRequest, reply: FastifyReply) => {
    try {
      const viewer = access.actor(req);
      const result = await fn(jsonBody(req.body), viewer);
      return reply.header('cache-control', 'no-store').send({ ok: true, ...(result as object) });
    } catch (err) {
      return fail(req, reply, err);
    }
  };

  const overview = (viewer: Viewer): Page.Overview => ({
    machine,
    viewer: { device: viewer.device, self: viewer.self },
    counts: board.counts(),
    agents: feed.agents(),
    sessions: board.agents(),
    refusals: feed.recentRefusals(),
    notes: feed.recentNotes(),
  });

  /** A task of this machine, by ledger key, for an action. */
  const localTask = async (key: string) => {
    const where = parseKey(key);
    if (!where) throw new ShroomsError('INVALID_PARAMS', 'key is not a task key');
    if (where.machine !== machine)
      throw new ShroomsError('NOT_ALLOWED', `that task is on ${where.machine}; act on it from ${where.machine}'s own dashboard`);
    const stored = await deps.ledger.get(key);
    if (!stored) throw new ShroomsError('TASK_NOT_FOUND', 'no such task in the ledger');
    return { session: where.session, stored };
  };

  /** A session of this machine, by MACHINE/SESSION, for the owner's controls. */
  const localSession = (agent: string, what: string) => {
    const a = parseAgent(agent);
    if (!a?.machine) throw new ShroomsError('INVALID_PARAMS', 'agent must be MACHINE/SESSION');
    if (a.machine !== machine)
      throw new ShroomsError('NOT_ALLOWED', `${agent} is on ${a.machine}; ${what} from ${a.machine}'s own dashboard`);
    return a.session;
  };

  /** A device's loop-guard window for a session (default: the viewer's own device); the `control` rule decides. */
  const guardWindow = async (input: unknown, viewer: Viewer, reset: boolean) => {
    const { agent, device } = parse(GuardWindowSchema, input);
    const session = localSession(agent, reset ? 'reset its loop-guard window' : 'see its loop-guard window');
    const { ids: _ids, ...window } = await deps.tasks.guardWindow(session, viewer, device ?? viewer.device, reset);
    return { agent, window };
  };

  const freshRow = async (key: string) => {
    const s = await deps.ledger.get(key);
    const row = s ? toRow(s) : undefined;
    if (row) board.upsert(row);
    return row;
  };

  const serve =
    (file: Asset, code = 200) =>
    async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        access.viewer(req);
      } catch (err) {
        const se = err instanceof ShroomsError ? err : new ShroomsError('INTERNAL', 'internal error');
        return reply.code(se.spec.http).type('text/plain; charset=utf-8').send(`${se.message}\n`);
      }
      reply.header('etag', file.etag).header('cache-control', 'no-cache');
      if (req.headers['if-none-match'] === file.etag) return reply.code(304).send();
      return reply.code(code).type(file.type).send(file.body);
    };

  app.register(
    async function dashboard(scope) {
      scope.addHook('onSend', async (_req, reply, payload) => {
        reply.header('content-security-policy', policy);
        reply.header('x-content-type-options', 'nosniff');
        reply.header('referrer-policy', 'no-referrer');
        reply.header('x-frame-options', 'DENY');
        return payload;
      });

      // In the dashboard's own error shape (its page reads `error.key`), not the A2A REST binding's.
      scope.setNotFoundHandler((req, reply) =>
        fail(
          req,
          reply,
          new ShroomsError('METHOD_NOT_FOUND', `the dashboard has no ${req.method} ${req.url.split('?')[0]!.slice(0, 200)}`),
        ),
      );
      scope.get('/', serve(html)); // both /dashboard and /dashboard/
      // The page's modules: app.js and what it imports, each by its file name (boot.js and the styles are in the page).
      if (scripts) {
        for (const [name, script] of scripts) if (name !== BOOT) scope.get(`/${name}`, serve(script));
      } else {
        scope.get(`/${ENTRY}`, serve(asset("the dashboard's script is not built: run `pnpm build`\n", 'text/plain; charset=utf-8'), 503));
      }

      scope.get(
        '/api/overview',
        read((_req, viewer) => overview(viewer), ['read', 'list_agents']),
      );

      scope.get(
        '/api/tasks',
        read((req) => {
          const q = parse(TasksQuerySchema, req.query);
          return board.page({ ...q, ...(q.agent ? { agent: q.agent } : {}) }) satisfies Page.TasksPage;
        }),
      );

      scope.get(
        '/api/task',
        read(async (req, viewer) => {
          const key = parse(z.object({ key: KeySchema }), req.query).key;
          const where = parseKey(key);
          if (!where) throw new ShroomsError('INVALID_PARAMS', 'key is not a task key');
          const stored = await deps.ledger.get(key);
          const detail = stored ? toDetail(stored) : undefined;
          if (!detail) throw new ShroomsError('TASK_NOT_FOUND', 'no such task in the ledger');
          authorize('read', viewer, { ...where, task: stored!.entry.task });
          board.upsert(detail.row);
          return { detail, children: board.childrenOf(key), chainSize: board.chain(key)?.size ?? 1 } satisfies Page.TaskAnswer;
        }),
      );

      scope.get(
        '/api/chains',
        read((req) => {
          const q = parse(ChainsQuerySchema, req.query);
          return board.chains(q.offset, q.limit) satisfies Page.ChainsPage;
        }),
      );

      scope.get(
        '/api/chain',
        read((req) => {
          const key = parse(z.object({ key: KeySchema }), req.query).key;
          const chain = board.chain(key);
          if (!chain) throw new ShroomsError('TASK_NOT_FOUND', 'no such task in the ledger');
          return { chain } satisfies Page.ChainAnswer;
        }),
      );

      scope.get(
        '/api/attention',
        read(
          () =>
            ({
              ...board.attention(),
              refusals: feed.recentRefusals(),
              notes: feed.recentNotes(),
              counts: board.counts(),
            }) satisfies Page.AttentionAnswer,
        ),
      );

      const roomForStream = () => {
        if (streams.full)
          throw new ShroomsError('LIMIT_EXCEEDED', `${streams.limits.max} dashboards are already following this gateway`, {
            limit: 'dashboardStreams',
            max: streams.limits.max,
          });
      };
      scope.get('/events', async (req, reply) => {
        let viewer: Viewer;
        try {
          viewer = access.viewer(req);
          for (const a of ['read', 'list_agents'] as const) authorize(a, viewer, { machine });
          roomForStream(); // before the feed is started for nothing
          await feed.use();
          roomForStream(); // again: others may have arrived, and taken the room, while it started
        } catch (err) {
          const res = fail(req, reply, err);
          return err instanceof ShroomsError && err.key === 'LIMIT_EXCEEDED' ? res.code(503) : res;
        }
        streams.open(req, reply, frame('hello', overview(viewer)), () => feed.touch());
        return reply;
      });

      scope.post(
        '/api/tasks/cancel',
        action(async (body, viewer) => {
          const { key } = parse(TaskActionSchema, body);
          const { session, stored } = await localTask(key);
          await deps.tasks.cancel(session, stored.entry.task.id, viewer);
          return { row: await freshRow(key) } satisfies Omit<Page.ActionAnswer, 'ok'>;
        }),
      );

      for (const verb of ['release', 'reject'] as const) {
        scope.post(
          `/api/tasks/${verb}`,
          action(async (body, viewer) => {
            const { key } = parse(TaskActionSchema, body);
            const { session, stored } = await localTask(key);
            const t = stored.entry.task;
            if (isTerminal(t.status.state as TaskState) || t.metadata?.[META.held] !== true) {
              throw new ShroomsError('UNSUPPORTED_OPERATION', `task ${t.id} is not held for the owner; there is nothing to ${verb}`);
            }
            await deps.tasks.control(session, verb, t.id, viewer);
            return { row: await freshRow(key) } satisfies Omit<Page.ActionAnswer, 'ok'>;
          }),
        );
      }

      scope.post(
        '/api/agents/reminders',
        action(async (body, viewer) => {
          const { agent, stop } = parse(RemindersSchema, body);
          const session = localSession(agent, 'change its reminders');
          const result = await deps.tasks.control(session, stop ? 'stop_reminders' : 'resume_reminders', undefined, viewer);
          return { agent, ...(result as object) };
        }),
      );

      // The loop guard's window (owner only: the `control` rule, checked by TaskService.guardWindow).
      scope.get(
        '/api/guard',
        read((req, viewer) => guardWindow(req.query, viewer, false)),
      );
      scope.post(
        '/api/guard/reset',
        action((body, viewer) => guardWindow(body, viewer, true)),
      );

      scope.addHook('onClose', async () => feed.close());
    },
    { prefix: '/dashboard' },
  );
  log.debug({ header: ACTION_HEADER }, 'dashboard at /dashboard');
}
