/**
 * Who is looking at the dashboard and who acts on it (docs/security.md): the device is named from
 * the connection's source address, never from a header, exactly as on the A2A surface — the viewer
 * is a Caller, and what it may see or do is the rules' (authz/rules.ts), not this file's: reads
 * follow `read` and `list_agents`, actions go through TaskService, which applies `cancel`,
 * `release`, `reject` and `control` with the viewer as the caller.
 *
 * The gateway's door (doors/) has already refused unnamed sources, foreign Host names (DNS
 * rebinding), foreign origins and non-JSON state changes for every route. Actions here also need the
 * `x-shrooms-dashboard` header, which no cross-site form can send and no cross-site fetch can send
 * without a CORS preflight this server never grants.
 */
import type { FastifyRequest } from 'fastify';
import { ShroomsError } from '@shrooms/protocol';
import { callerOf, type Identify } from '../a2a/caller.js';
import type { Caller } from '../tasks/caller.js';

export const ACTION_HEADER = 'x-shrooms-dashboard';

export type Viewer = Caller;

export class DashboardAccess {
  constructor(private readonly identify: Identify) {}

  /** The viewer of a request, or a ShroomsError (UNKNOWN_DEVICE). */
  viewer(req: FastifyRequest): Viewer {
    return callerOf(req, this.identify, undefined);
  }

  /** The viewer of an action sent by the page itself; who may do it is decided by the rules. */
  actor(req: FastifyRequest): Viewer {
    const v = this.viewer(req);
    if (req.headers[ACTION_HEADER] !== '1') {
      throw new ShroomsError('CROSS_SITE_REFUSED', `actions come from the dashboard page: a JSON body and the ${ACTION_HEADER} header`, {
        check: 'header',
      });
    }
    return v;
  }
}
