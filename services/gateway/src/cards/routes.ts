import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ShroomsError, toRestError } from '@shrooms/protocol';
import { callerOf } from '../a2a/caller.js';
import type { A2AContext } from '../a2a/context.js';
import { authorize } from '../authz/rules.js';
import { machineCard, sendCached, sessionCard } from './cards.js';

/** Base URL for card links: the configured public URL, else the host the client used. */
export function baseUrl(req: FastifyRequest, configured?: string): string {
  if (configured) return configured;
  const host = req.headers.host ?? `${req.socket.localAddress}:${req.socket.localPort}`;
  return `${req.protocol}://${host}`;
}

export function registerCards(app: FastifyInstance, ctx: A2AContext, publicUrl?: string): void {
  const { tasks } = ctx;
  // Cards show the machine's sessions (its live parts): the list_agents rule, as /agents.
  const mayList = (req: FastifyRequest) => authorize('list_agents', callerOf(req, ctx.identify, undefined), { machine: tasks.machine });
  const machine = async (req: FastifyRequest, reply: FastifyReply) => {
    mayList(req);
    const sessions = await tasks.d.signals.list(tasks.machine);
    return sendCached(req, reply, machineCard(baseUrl(req, publicUrl), tasks.machine, sessions, ctx.defaultSession));
  };
  app.get('/.well-known/agent-card.json', machine);
  // Where `new URL('.well-known/agent-card.json', 'http://host/a2a/demo')` lands — the a2a-js
  // resolver drops the last path segment of a base without a trailing slash. The session is lost
  // there, so this is the machine's card, whose interfaces lead to its default session.
  app.get('/a2a/.well-known/agent-card.json', machine);
  app.get('/a2a/:session/.well-known/agent-card.json', async (req, reply) => {
    try {
      mayList(req);
      const session = ctx.sessionName((req.params as { session: string }).session);
      await tasks.requireSession(session);
      const signal = await tasks.d.signals.get(tasks.machine, session);
      return sendCached(req, reply, sessionCard(baseUrl(req, publicUrl), tasks.machine, session, signal));
    } catch (err) {
      const se = err instanceof ShroomsError ? err : new ShroomsError('INTERNAL', 'internal error');
      return reply.code(se.spec.http).send(toRestError(se));
    }
  });
}
