/**
 * Agent cards (spec §4): one per session, and the machine's card listing its sessions as skills.
 * Spec JSON (enum names, no `$case` objects), with ETag and Cache-Control.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EXTENSION_URI, META } from '@shrooms/protocol';
import type { SignalView } from '@shrooms/ledger';

export const VERSION = '0.1.0';

const EXTENSION = {
  uri: EXTENSION_URI,
  description:
    "shrooms task extension: a task stays open until the worker calls task_update (done|blocked|failed); AckTask is the asker's bookkeeping; " +
    `SendMessage with metadata "${META.at}" (ISO time, "${META.repeat}" optional) creates a schedule and answers with a SUBMITTED task.`,
  required: false,
  params: { metadataPrefix: 'shrooms/', methods: ['AckTask'] },
};

/**
 * How a client reaches an agent: v1.0's `supportedInterfaces` (JSON-RPC first, the SDKs' default),
 * and beside them v0.3's `url`/`preferredTransport`/`protocolVersion`/`additionalInterfaces`, so a
 * v0.3 client reading the same card finds the same endpoints (its HTTP+JSON transport adds `/v1/`).
 */
function interfaces(url: string, rest = true) {
  return {
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      ...(rest ? [{ url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' }] : []),
    ],
    protocolVersion: '0.3.0',
    url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url, transport: 'JSONRPC' }, ...(rest ? [{ url, transport: 'HTTP+JSON' }] : [])],
  };
}

const capabilities = { streaming: true, pushNotifications: false, extensions: [EXTENSION], extendedAgentCard: false };

// Cards are public to the mesh: they name a session's harness, never its working directory.
export function sessionCard(base: string, machine: string, session: string, signal: SignalView | null): Record<string, unknown> {
  const what = signal ? `${/^[aeiou]/i.test(signal.harness) ? 'an' : 'a'} ${signal.harness} session` : 'a session';
  return {
    name: `${machine}/${session}`,
    description: `${machine}/${session}: ${what} on the shrooms agent mesh. Send it a task as text; it answers when its worker finishes.`,
    ...interfaces(`${base}/a2a/${encodeURIComponent(session)}`),
    provider: { organization: 'shrooms agent mesh', url: base },
    version: VERSION,
    capabilities,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'task',
        name: 'task',
        description: `Work on a task in ${machine}/${session}.`,
        tags: ['shrooms', signal?.harness ?? 'session'],
      },
    ],
  };
}

/**
 * The machine's card. Its interfaces lead a client that knows nothing of shrooms to one session:
 * the default one (`GATEWAY_DEFAULT_SESSION`, or the only session there is), at that session's own
 * endpoints. With several sessions and no default, only JSON-RPC on `POST /a2a` is offered, which
 * routes by task id or `metadata["shrooms/session"]`; each skill names its session's own card.
 */
export function machineCard(base: string, machine: string, sessions: SignalView[], defaultSession?: string): Record<string, unknown> {
  const front = frontSession(sessions, defaultSession);
  const how = front
    ? `Messages sent to this card's interfaces go to ${machine}/${front}.`
    : `Send to a session through its own card (each skill names one), or to POST /a2a with metadata "${META.session}".`;
  return {
    name: machine,
    description: `The sessions of ${machine} on the shrooms agent mesh. ${how}`,
    ...(front ? interfaces(`${base}/a2a/${encodeURIComponent(front)}`) : interfaces(`${base}/a2a`, false)),
    provider: { organization: 'shrooms agent mesh', url: base },
    version: VERSION,
    capabilities,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: sessions.map((s) => ({
      id: s.session,
      name: `${machine}/${s.session}`,
      description: `${s.harness} session, ${s.state}. Card: ${base}/a2a/${encodeURIComponent(s.session)}/.well-known/agent-card.json`,
      tags: ['session', s.harness, s.state],
    })),
  };
}

/** The session a request that names none goes to: the configured default, or the only one. */
export function frontSession(sessions: Pick<SignalView, 'session'>[], defaultSession?: string): string | undefined {
  return defaultSession ?? (sessions.length === 1 ? sessions[0]!.session : undefined);
}

/** Sends JSON with a strong ETag; answers 304 when the client already has it. */
export function sendCached(req: FastifyRequest, reply: FastifyReply, body: unknown): FastifyReply {
  const json = JSON.stringify(body);
  const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
  reply.header('etag', etag).header('cache-control', 'public, max-age=30').header('content-type', 'application/json');
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.code(200).send(json);
}
