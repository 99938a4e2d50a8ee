/** The JSON-RPC 2.0 binding: `POST /a2a/{session}` and `POST /a2a` (routed by task or metadata). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { META, ShroomsError, toJsonRpcError } from '@shrooms/protocol';
import { V03_METHODS, paramsFromV03, resultToV03, streamEventToV03 } from '../v03/jsonrpc.js';
import { isNatsOutage, natsUnavailable } from '@shrooms/runtime';
import { TaskService } from '../tasks/service.js';
import type { A2AContext } from './context.js';
import { callerOf, clientGone } from './caller.js';
import { MACHINE_METHODS, callMethod } from './methods.js';
import { checkVersion } from './version.js';
import { v03Stream } from './stream.js';
import { frontSession } from '../cards/cards.js';
import { headerContext } from './trace.js';
import { looseParams } from './params.js';

type RpcId = string | number | null;

function rpcId(body: unknown): RpcId {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

export function asShroomsError(err: unknown): ShroomsError {
  if (err instanceof ShroomsError) return err;
  if (isNatsOutage(err)) return natsUnavailable();
  return new ShroomsError('INTERNAL', 'internal error');
}

/**
 * `Retry-After` on every retryable refusal, in both bindings (on JSON-RPC's HTTP 200 too): the
 * wait the error names (loop guard, budget), else its key's default (errors.ts RETRY_AFTER_SECONDS).
 */
export function retryAfter(reply: FastifyReply, se: ShroomsError): FastifyReply {
  const s = se.retryAfterSeconds;
  if (s !== undefined) reply.header('retry-after', String(s));
  return reply;
}

export function registerJsonRpc(app: FastifyInstance, ctx: A2AContext): void {
  const handle = async (req: FastifyRequest, reply: FastifyReply, sessionParam?: string) => {
    let id: RpcId = null;
    const fail = (err: unknown) => {
      const se = asShroomsError(err);
      if (se.key === 'INTERNAL') req.log.error({ err }, 'internal error');
      if (se.key === 'NATS_UNAVAILABLE') req.log.warn({ err: (err as Error).message }, 'nats unavailable');
      return retryAfter(reply, se)
        .code(200)
        .send({ jsonrpc: '2.0', id, error: toJsonRpcError(se) });
    };
    try {
      const body = parseBody(req.body);
      id = rpcId(body);
      if (body === null || typeof body !== 'object' || Array.isArray(body))
        throw new ShroomsError('INVALID_REQUEST', 'the body must be one JSON-RPC 2.0 request object');
      const b = body as Record<string, unknown>;
      if (b.jsonrpc !== '2.0' || typeof b.method !== 'string')
        throw new ShroomsError('INVALID_REQUEST', 'a JSON-RPC 2.0 request needs "jsonrpc":"2.0" and a string "method"');
      if (b.id !== undefined && b.id !== null && typeof b.id !== 'string' && typeof b.id !== 'number')
        throw new ShroomsError('INVALID_REQUEST', 'id must be a string, a number or null');
      checkVersion(req);
      // v0.3 names are served in v0.3 shapes whatever the header says; the names cannot collide.
      const v03 = Object.hasOwn(V03_METHODS, b.method) ? b.method : undefined;
      const method = v03 ? V03_METHODS[v03]! : b.method;
      const params = v03 ? paramsFromV03(v03, b.params) : b.params;
      const machineLevel = MACHINE_METHODS.has(method);
      const session = sessionParam ?? (machineLevel ? '-' : await routeSession(ctx, params));
      const caller = callerOf(req, ctx.identify, params);
      const out = await callMethod(method, params, {
        tasks: ctx.tasks,
        session: machineLevel ? session : ctx.sessionName(session),
        caller,
        schedules: ctx.schedules,
        gone: clientGone(req),
        schedule: ctx.schedule,
        parent: headerContext(req),
      });
      if ('stream' in out) {
        const shape = v03 ? streamEventToV03 : (e: unknown) => e;
        await ctx.sse.pipe(
          req,
          reply,
          caller.device,
          v03 ? v03Stream(out.stream) : out.stream,
          (e) => ({ jsonrpc: '2.0', id, result: shape(e) }),
          (se) => ({ jsonrpc: '2.0', id, error: toJsonRpcError(se) }),
        );
        return reply;
      }
      return reply.code(200).send({ jsonrpc: '2.0', id, result: v03 ? resultToV03(v03, out.result) : out.result });
    } catch (err) {
      return fail(err);
    }
  };
  // `POST /a2a/` comes here with an empty session: it is `POST /a2a`, not a session named "".
  const bySession = (req: FastifyRequest, reply: FastifyReply) =>
    handle(req, reply, (req.params as { session: string }).session || undefined);
  app.post('/a2a/:session', bySession);
  // The endpoint as `up` prints it (with its slash), pasted into curl.
  app.post('/a2a/:session/', bySession);
  app.post('/a2a', (req, reply) => handle(req, reply));
}

/**
 * The session of a `POST /a2a` request: from its task id or `metadata["shrooms/session"]`, else the
 * machine's front session (the default, or the only one) — what the machine card leads a generic
 * client to. A session named in metadata that is no session name, or one of another machine, is
 * refused, never rerouted.
 */
async function routeSession(ctx: A2AContext, params: unknown): Promise<string> {
  const routed = TaskService.sessionFromParams(params, ctx.tasks.machine);
  if (routed) return routed;
  const p = looseParams(params);
  const claimed = p.metadata?.[META.session] ?? p.message?.metadata?.[META.session];
  if (claimed !== undefined)
    throw new ShroomsError(
      'SESSION_NOT_FOUND',
      `metadata["${META.session}"] names no session: ${JSON.stringify(String(claimed).slice(0, 80))}`,
    );
  return frontSessionOf(ctx, 'POST /a2a needs a task id or metadata["shrooms/session"] to know the session');
}

/**
 * The machine's front session (the configured default, or its only session) for a request that
 * names none; `what` says what the request lacks when there is no such session.
 */
export async function frontSessionOf(ctx: A2AContext, what: string): Promise<string> {
  // The configured default needs no listing; only without one is the machine's only session looked up.
  const front = ctx.defaultSession ?? frontSession(await ctx.tasks.d.signals.list(ctx.tasks.machine));
  if (front) return front;
  throw new ShroomsError('INVALID_PARAMS', `${what} (this machine has several and no GATEWAY_DEFAULT_SESSION); or use /a2a/{session}`);
}

/** Bodies arrive as strings (any content type) so a parse error is ours to answer. */
export function parseBody(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw new ShroomsError('PARSE_ERROR', 'the body is not valid JSON');
  }
}
