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

function interfaces(url: string) {
  return [
    { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    { url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
  ];
}

const capabilities = { streaming: true, pushNotifications: false, extensions: [EXTENSION], extendedAgentCard: false };

export function sessionCard(base: string, machine: string, session: string, signal: SignalView | null): Record<string, unknown> {
  const what = signal ? `a ${signal.harness} session${signal.cwd ? ` in ${signal.cwd}` : ''}` : 'a session';
  return {
    name: `${machine}/${session}`,
    description: `${machine}/${session}: ${what} on the shrooms agent mesh. Send it a task as text; it answers when its worker finishes.`,
    supportedInterfaces: interfaces(`${base}/a2a/${encodeURIComponent(session)}`),
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

export function machineCard(base: string, machine: string, sessions: SignalView[]): Record<string, unknown> {
  return {
    name: machine,
    description: `The sessions of ${machine} on the shrooms agent mesh. Each skill is a session with its own card at /a2a/SESSION/.well-known/agent-card.json.`,
    supportedInterfaces: interfaces(`${base}/a2a`),
    provider: { organization: 'shrooms agent mesh', url: base },
    version: VERSION,
    capabilities,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: sessions.map((s) => ({
      id: s.session,
      name: `${machine}/${s.session}`,
      description: `${s.harness} session, ${s.state}${s.cwd ? `, in ${s.cwd}` : ''}. Card: ${base}/a2a/${encodeURIComponent(s.session)}/.well-known/agent-card.json`,
      tags: ['session', s.harness, s.state],
    })),
  };
}

/** Sends JSON with a strong ETag; answers 304 when the client already has it. */
export function sendCached(req: FastifyRequest, reply: FastifyReply, body: unknown): FastifyReply {
  const json = JSON.stringify(body);
  const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
  reply.header('etag', etag).header('cache-control', 'public, max-age=30').header('content-type', 'application/json');
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.code(200).send(json);
}
