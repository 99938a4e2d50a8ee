/**
 * The HTTP+JSON binding under `/a2a/{session}/` (spec §4): `message:send`, `message:stream`,
 * `tasks`, `tasks/{id}`, `tasks/{id}:cancel`, `tasks/{id}:subscribe`, `tasks/{id}:ack`, the
 * push-config paths, `extendedAgentCard`. Errors as `google.rpc.Status` with the HTTP status.
 *
 * The same routes at the host root serve the machine's front session (as `POST /a2a` does for
 * JSON-RPC): the A2A TCK builds its HTTP+JSON URLs from the origin of the card it read there.
 *
 * Beside it, A2A v0.3 over HTTP+JSON under `/a2a/{session}/v1/` (what `@a2a-js/sdk` 0.3.x's
 * RestTransport calls): the same methods on the same ledger, in v0.3's shapes (../v03/rest.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ShroomsError, toJsonRpcError, toRestError } from '@shrooms/protocol';
import { resultToV03Rest, sendParamsFromV03Rest, streamEventToV03Rest } from '../v03/rest.js';
import type { StreamResponse } from '@shrooms/protocol';
import type { A2AContext } from './context.js';
import { callerOf, clientGone } from './caller.js';
import { asShroomsError, frontSessionOf, parseBody, retryAfter } from './jsonrpc.js';
import { callMethod } from './methods.js';
import { checkVersion } from './version.js';
import { headerContext } from './trace.js';
import { v03Stream, type TaskStream } from './stream.js';

type Q = Record<string, string | undefined>;

function num(v: string | undefined, name: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new ShroomsError('INVALID_PARAMS', `${name} must be an integer`);
  return n;
}

function bool(v: string | undefined, name: string): boolean | undefined {
  if (v === undefined || v === '') return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new ShroomsError('INVALID_PARAMS', `${name} must be true or false`);
}

/**
 * Splits `tasks/{id}[:verb]`; ids may contain `:` (SESSION:ID), so only known verbs are split off.
 * The router has already percent-decoded the path once; decoding again would let `%2525` become
 * `%` (and a lone `%` throw).
 */
function taskPath(decoded: string): { id: string; verb?: string; configId?: string; configs: boolean } {
  const cfg = decoded.match(/^(.*)\/pushNotificationConfigs(?:\/(.+))?$/);
  if (cfg) return { id: cfg[1]!, configId: cfg[2], configs: true };
  const m = decoded.match(/^(.*):(cancel|subscribe|ack|update|release|reject)$/);
  return m ? { id: m[1]!, verb: m[2], configs: false } : { id: decoded, configs: false };
}

/** How one flavour of the binding writes its answers: v1.0, or v0.3 (`/v1/` paths). */
interface RestShape {
  result(method: string, result: unknown): unknown;
  /** The stream as this binding sends it (v0.3: closing on a `final` status update). */
  stream(s: TaskStream): TaskStream;
  event(e: StreamResponse): unknown;
  error(se: ShroomsError): unknown;
  contentType: string;
}

const V10: RestShape = { result: (_m, r) => r, stream: (s) => s, event: (e) => e, error: toRestError, contentType: 'application/a2a+json' };
const V03: RestShape = {
  result: resultToV03Rest,
  stream: v03Stream,
  event: streamEventToV03Rest,
  error: toJsonRpcError,
  contentType: 'application/json',
};

type Run = (req: FastifyRequest, reply: FastifyReply, method: string, params: () => unknown, status?: number) => Promise<FastifyReply>;
type SessionOf = (req: FastifyRequest) => string | Promise<string>;

const fromPath: SessionOf = (req) => (req.params as { session: string }).session;

function runner(ctx: A2AContext, shape: RestShape, sessionOf: SessionOf = fromPath): Run {
  return async (req, reply, method, params, status = 200) => {
    try {
      checkVersion(req);
      const session = ctx.sessionName(await sessionOf(req));
      const p = params();
      const caller = callerOf(req, ctx.identify, p);
      const out = await callMethod(method, p, {
        tasks: ctx.tasks,
        session,
        caller,
        gone: clientGone(req),
        schedule: ctx.schedule,
        parent: headerContext(req),
      });
      if ('stream' in out) {
        await ctx.sse.pipe(req, reply, caller.device, shape.stream(out.stream), shape.event, shape.error);
        return reply;
      }
      return reply
        .code(status)
        .header('content-type', shape.contentType)
        .send(JSON.stringify(shape.result(method, out.result)));
    } catch (err) {
      const se = asShroomsError(err);
      if (se.key === 'INTERNAL') req.log.error({ err }, 'internal error');
      if (se.key === 'NATS_UNAVAILABLE') req.log.warn({ err: (err as Error).message }, 'nats unavailable');
      return retryAfter(reply, se)
        .code(se.spec.http)
        .header('content-type', 'application/json')
        .send(JSON.stringify(shape.error(se)));
    }
  };
}

/** The JSON object body of a request (parsed lazily, inside `run`, so its errors are answered in shape). */
const body = (req: FastifyRequest) => () => {
  const b = parseBody(req.body);
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new ShroomsError('INVALID_REQUEST', 'the body must be a JSON object');
  return b;
};

/** `tasks/{id}…` requests both flavours share: get, cancel, subscribe, push configs. Undefined when not one of them. */
function taskRoute(req: FastifyRequest, reply: FastifyReply, run: Run, t: ReturnType<typeof taskPath>): Promise<FastifyReply> | undefined {
  const q = req.query as Q;
  if (t.configs) {
    const method =
      req.method === 'POST'
        ? 'CreateTaskPushNotificationConfig'
        : req.method === 'DELETE'
          ? 'DeleteTaskPushNotificationConfig'
          : t.configId
            ? 'GetTaskPushNotificationConfig'
            : 'ListTaskPushNotificationConfigs';
    return run(req, reply, method, () => ({ taskId: t.id, id: t.configId }));
  }
  if (req.method === 'GET' && !t.verb)
    return run(req, reply, 'GetTask', () => ({ id: t.id, historyLength: num(q.historyLength ?? q.history_length, 'historyLength') }));
  if (req.method === 'POST' && t.verb === 'cancel')
    return run(req, reply, 'CancelTask', () => ({ ...(req.body ? (body(req)() as object) : {}), id: t.id }));
  if (t.verb === 'subscribe' && (req.method === 'POST' || req.method === 'GET'))
    return run(req, reply, 'SubscribeToTask', () => ({ id: t.id }));
  return undefined;
}

export function registerRest(app: FastifyInstance, ctx: A2AContext): void {
  v10Routes(app, runner(ctx, V10), '/a2a/:session');
  v10Routes(
    app,
    runner(ctx, V10, () => frontSessionOf(ctx, 'an HTTP+JSON request at the host root goes to the machine’s front session')),
    '',
  );
  registerRestV03(app, ctx);
}

/** The v1.0 routes under `prefix` (`/a2a/:session`, or the host root for the front session). */
function v10Routes(app: FastifyInstance, run: Run, prefix: string): void {
  app.post(`${prefix}/message::send`, (req, reply) => run(req, reply, 'SendMessage', body(req)));
  app.post(`${prefix}/message::stream`, (req, reply) => run(req, reply, 'SendStreamingMessage', body(req)));
  app.get(`${prefix}/tasks`, (req, reply) =>
    run(req, reply, 'ListTasks', () => {
      const q = req.query as Q;
      return {
        contextId: q.contextId,
        status: q.status,
        pageSize: num(q.pageSize, 'pageSize'),
        pageToken: q.pageToken,
        historyLength: num(q.historyLength, 'historyLength'),
        statusTimestampAfter: q.statusTimestampAfter,
        includeArtifacts: bool(q.includeArtifacts, 'includeArtifacts'),
      };
    }),
  );
  app.post(`${prefix}/reminders::stop`, (req, reply) => run(req, reply, 'ControlSession', () => ({ action: 'stop_reminders' })));
  app.post(`${prefix}/reminders::resume`, (req, reply) => run(req, reply, 'ControlSession', () => ({ action: 'resume_reminders' })));
  app.get(`${prefix}/extendedAgentCard`, (req, reply) => run(req, reply, 'GetExtendedAgentCard', () => ({})));
  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: `${prefix}/tasks/*`,
    handler: (req, reply) => {
      const t = taskPath((req.params as { '*': string })['*']);
      const shared = taskRoute(req, reply, run, t);
      if (shared) return shared;
      if (req.method === 'POST' && t.verb === 'ack') return run(req, reply, 'AckTask', () => ({ id: t.id }));
      if (req.method === 'POST' && t.verb === 'update')
        return run(req, reply, 'UpdateTask', () => ({ ...(body(req)() as object), id: t.id }));
      if (req.method === 'POST' && (t.verb === 'release' || t.verb === 'reject'))
        return run(req, reply, 'ControlSession', () => ({ ...(req.body ? (body(req)() as object) : {}), action: t.verb, id: t.id }));
      return run(req, reply, 'unknown', () => ({}));
    },
  });
}

/** v0.3 over HTTP+JSON: the A2A methods only (our extensions are v1.0's), in v0.3's shapes. */
function registerRestV03(app: FastifyInstance, ctx: A2AContext): void {
  const run = runner(ctx, V03);
  const send = (req: FastifyRequest) => () => sendParamsFromV03Rest(body(req)());
  app.post('/a2a/:session/v1/message::send', (req, reply) => run(req, reply, 'SendMessage', send(req)));
  app.post('/a2a/:session/v1/message::stream', (req, reply) => run(req, reply, 'SendStreamingMessage', send(req)));
  app.get('/a2a/:session/v1/card', (req, reply) => run(req, reply, 'GetExtendedAgentCard', () => ({})));
  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: '/a2a/:session/v1/tasks/*',
    handler: (req, reply) =>
      taskRoute(req, reply, run, taskPath((req.params as { '*': string })['*'])) ?? run(req, reply, 'unknown', () => ({})),
  });
}
