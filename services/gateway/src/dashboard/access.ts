/**
 * Who may see the dashboard and who may act on it (docs/security.md): the same rule as the A2A
 * surface — the device is named from the connection's source address, never from a header — so only
 * this machine and the devices of the mesh see it, and only this machine itself (its owner) may act.
 *
 * The gateway's door (doors/) has already refused unnamed sources, foreign Host names (DNS
 * rebinding), foreign origins and non-JSON state changes for every route. Actions here also need the
 * `x-shrooms-dashboard` header, which no cross-site form can send and no cross-site fetch can send
 * without a CORS preflight this server never grants.
 */
import type { FastifyRequest } from 'fastify';
import { ShroomsError } from '@shrooms/protocol';
import type { Identify } from '../a2a/caller.js';

export const ACTION_HEADER = 'x-shrooms-dashboard';

export interface Viewer {
  device: string;
  /** The request came from this machine itself: the owner, who may act. */
  self: boolean;
}

export class DashboardAccess {
  constructor(private readonly identify: Identify) {}

  /** The viewer of a request, or a ShroomsError (UNKNOWN_DEVICE). */
  viewer(req: FastifyRequest): Viewer {
    const addr = req.socket.remoteAddress ?? '';
    const id = addr ? this.identify(addr) : undefined;
    if (!id) throw new ShroomsError('UNKNOWN_DEVICE', `source address ${addr || 'unknown'} is not a device of the mesh`);
    return { device: id.device, self: id.self };
  }

  /** The owner, acting from the page itself; anything else is refused. */
  actor(req: FastifyRequest): Viewer {
    const v = this.viewer(req);
    if (!v.self)
      throw new ShroomsError('ACTION_FORBIDDEN', `only the owner, on this machine itself, may act here (this is ${v.device})`, {
        action: 'dashboard',
        rule: "the session owner's machine",
      });
    if (req.headers[ACTION_HEADER] !== '1') {
      throw new ShroomsError('CROSS_SITE_REFUSED', `actions come from the dashboard page: a JSON body and the ${ACTION_HEADER} header`, {
        check: 'header',
      });
    }
    return v;
  }
}
