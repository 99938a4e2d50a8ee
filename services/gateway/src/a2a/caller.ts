import type { FastifyRequest } from 'fastify';
import { META, ShroomsError, parseAgent } from '@shrooms/protocol';
import { looseParams } from './params.js';
import type { Caller } from '../tasks/caller.js';
import type { ClientGone } from '../tasks/live.js';

/** Names a request's device from its source address only (never forwarded-for headers). */
export type Identify = (sourceAddress: string) => { device: string; self: boolean; name?: string } | undefined;

export function loopbackOnly(machine: string): Identify {
  return (addr) => (/^(127\.|::1$|::ffff:127\.)/.test(addr) ? { device: machine, name: machine, self: true } : undefined);
}

export function callerOf(req: FastifyRequest, identify: Identify, params: unknown): Caller {
  const addr = req.socket.remoteAddress ?? '';
  const id = identify(addr);
  if (!id) throw new ShroomsError('UNKNOWN_DEVICE', `source address ${addr} is not a device of the mesh`);
  const p = looseParams(params);
  const claimed = p.metadata?.[META.from] ?? p.message?.metadata?.[META.from];
  const from = typeof claimed === 'string' && claimed.length <= 200 && parseAgent(claimed)?.session ? claimed : undefined;
  return { device: id.device, machine: id.name ?? id.device, self: id.self, ...(from ? { from } : {}) };
}

/**
 * The client of `req` going away (its socket closing), as a blocking wait follows it: at once for a
 * client already gone (its 'close' came while the request was being looked at, before anyone listened).
 */
export function clientGone(req: Pick<FastifyRequest, 'raw'>): ClientGone {
  const socket = req.raw.socket;
  return (then) => {
    if (socket.destroyed) {
      then();
      return () => {};
    }
    // Removed when the wait ends: a keep-alive socket serves many requests, and each listener left
    // behind would hold its request's state until the connection closes.
    socket.once('close', then);
    return () => socket.off('close', then);
  };
}
