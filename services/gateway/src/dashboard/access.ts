/**
 * Who may see the dashboard and who may act on it (spec §6): the same rule as the A2A surface — the
 * device is named from the connection's source address, never from a header — so only this machine
 * and the devices of the mesh see it, and only this machine itself (its owner) may act.
 *
 * A page served to the owner's own browser on loopback can be reached by any web page that browser
 * opens, so two more checks keep other sites out: the Host header must name this gateway (an IP
 * address, `localhost`, the machine's name, the public URL's host or one listed in
 * DASHBOARD_ALLOWED_HOSTS) against DNS rebinding, and actions need a JSON body with the
 * `x-shrooms-dashboard` header and a same-origin `Origin`, which a cross-site form or fetch cannot
 * send without a CORS preflight this server never grants.
 */
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { ShroomsError } from '@shrooms/protocol';
import type { Identify } from '../a2a/caller.js';

export const ACTION_HEADER = 'x-shrooms-dashboard';

export interface Viewer {
  device: string;
  /** The request came from this machine itself: the owner, who may act. */
  self: boolean;
}

/** The hostname of a Host header (`[::1]:7387` → `::1`, `laptop:7387` → `laptop`), lower-case. */
export function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 0 ? h.slice(1, end) : undefined;
  }
  const colon = h.indexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

export function allowedHosts(machine: string, publicUrl: string | undefined, extra: string | undefined): Set<string> {
  const set = new Set(['localhost', machine.toLowerCase()]);
  if (publicUrl) {
    try {
      set.add(hostnameOf(new URL(publicUrl).host)!);
    } catch {
      /* not a URL: nothing to add */
    }
  }
  for (const h of (extra ?? '').split(',')) if (h.trim()) set.add(h.trim().toLowerCase());
  return set;
}

export class DashboardAccess {
  constructor(
    private readonly identify: Identify,
    private readonly hosts: Set<string>,
  ) {}

  /** The viewer of a request, or a ShroomsError (UNKNOWN_DEVICE / NOT_ALLOWED). */
  viewer(req: FastifyRequest): Viewer {
    const addr = req.socket.remoteAddress ?? '';
    const id = addr ? this.identify(addr) : undefined;
    if (!id) throw new ShroomsError('UNKNOWN_DEVICE', `source address ${addr || 'unknown'} is not a device of the mesh`);
    const host = hostnameOf(req.headers.host);
    if (!host || !(isIP(host) || this.hosts.has(host))) {
      throw new ShroomsError(
        'NOT_ALLOWED',
        `this dashboard does not answer to the host name ${JSON.stringify(String(req.headers.host ?? '').slice(0, 100))}; add it to DASHBOARD_ALLOWED_HOSTS`,
      );
    }
    return { device: id.device, self: id.self };
  }

  /** The owner, acting from the page itself; anything else is refused. */
  actor(req: FastifyRequest): Viewer {
    const v = this.viewer(req);
    if (!v.self) throw new ShroomsError('NOT_ALLOWED', `only the owner, on this machine itself, may act here (this is ${v.device})`);
    const ct = String(req.headers['content-type'] ?? '');
    if (req.headers[ACTION_HEADER] !== '1' || !ct.startsWith('application/json')) {
      throw new ShroomsError('NOT_ALLOWED', `actions come from the dashboard page: a JSON body and the ${ACTION_HEADER} header`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== 'null') {
      let same = false;
      try {
        same = new URL(origin).host.toLowerCase() === String(req.headers.host ?? '').toLowerCase();
      } catch {
        same = false;
      }
      if (!same) throw new ShroomsError('NOT_ALLOWED', "actions are taken only from this dashboard's own page");
    } else if (origin === 'null') {
      throw new ShroomsError('NOT_ALLOWED', "actions are taken only from this dashboard's own page");
    }
    return v;
  }
}
