/**
 * Every request passes one door before any route sees it (docs/security.md), so both A2A bindings,
 * the cards, /agents, the dashboard and the schedule methods follow the same rules:
 *
 *   1. the source address must name a device of the mesh                      → UNKNOWN_DEVICE
 *   2. the Host header must name this gateway (its own addresses, `localhost`, the machine's name,
 *      the public URL's host, GATEWAY_ALLOWED_HOSTS): no DNS-rebinding name    → CROSS_SITE_REFUSED (host)
 *   3. a state change (POST, PUT, PATCH, DELETE) with an `Origin` must come from this gateway's own
 *      origin: a page on another site cannot act through the owner's browser → CROSS_SITE_REFUSED (origin)
 *   4. a state change carries JSON or nothing. `text/plain`, forms and multipart are what a browser
 *      sends cross-site without a CORS preflight this server never grants: from a browser (an
 *      `Origin`, or `Sec-Fetch-Site` other than same-origin/none)           → CROSS_SITE_REFUSED (content-type)
 *      from any other client (curl, an SDK, the A2A TCK), the spec's error → CONTENT_TYPE_NOT_SUPPORTED
 *      Either way the body is never read.
 *
 * Health probes (`/healthz`, `/readyz`) answer anyone: they reveal nothing and orchestrators probe
 * them from addresses the mesh does not name. The hook runs on `onRequest`, before the body is read.
 */
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ShroomsError } from '@shrooms/protocol';
import type { Identify } from '../a2a/caller.js';
import { answerError } from '../a2a/http-errors.js';
import { hostnameOf } from './hosts.js';

const OPEN_PATHS = new Set(['/healthz', '/readyz']);
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** application/json, application/a2a+json, application/*+json (parameters such as charset allowed). */
const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

const unmapped = (a: string) => a.toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');

export interface DoorOptions {
  /** This machine's name (SHROOMS_MACHINE): a Host it answers to. */
  machine: string;
  /** GATEWAY_PUBLIC_URL, whose host it answers to. */
  publicUrl?: string;
  /** Addresses of its own besides the one a connection arrived on (listen hosts, mesh addresses). */
  addresses?: string[];
  /** Extra host names (GATEWAY_ALLOWED_HOSTS), lower-case, without port or brackets (hosts.ts `allowedHostName`). */
  extraHosts?: readonly string[];
}

/** The names and addresses a Host header may carry for this gateway. */
export function ownHosts(o: DoorOptions): Set<string> {
  const set = new Set(['localhost', '127.0.0.1', '::1', o.machine.toLowerCase()]);
  if (o.publicUrl) {
    try {
      set.add(hostnameOf(new URL(o.publicUrl).host)!);
    } catch {
      /* not a URL: nothing to add */
    }
  }
  for (const a of o.addresses ?? []) if (a.trim()) set.add(unmapped(a.trim().split('/')[0]!));
  for (const h of o.extraHosts ?? []) set.add(unmapped(h));
  return set;
}

/**
 * Whether a browser sent this from a page: browsers add `Origin` to every POST a page makes (a form,
 * a no-cors fetch) and `Sec-Fetch-Site` to every request; curl, SDKs and the TCK send neither.
 */
function fromBrowserPage(req: FastifyRequest): boolean {
  const site = req.headers['sec-fetch-site'];
  return req.headers.origin !== undefined || (site !== undefined && site !== 'same-origin' && site !== 'none');
}

export class Doors {
  private readonly hosts: Set<string>;
  constructor(
    private readonly identify: Identify,
    opts: DoorOptions,
  ) {
    this.hosts = ownHosts(opts);
  }

  /** Throws the refusal for this request, or returns the device the mesh names. */
  check(req: FastifyRequest): { device: string; self: boolean; name?: string } {
    const addr = req.socket.remoteAddress ?? '';
    const id = addr ? this.identify(addr) : undefined;
    if (!id) throw new ShroomsError('UNKNOWN_DEVICE', `source address ${addr || 'unknown'} is not a device of the mesh`);
    if (!this.isOwnHost(req)) {
      throw new ShroomsError(
        'CROSS_SITE_REFUSED',
        `this gateway does not answer to the host name ${JSON.stringify(String(req.headers.host ?? '').slice(0, 100))}; add it to GATEWAY_ALLOWED_HOSTS`,
        { check: 'host' },
      );
    }
    if (STATE_CHANGING.has(req.method)) {
      const origin = req.headers.origin;
      if (origin !== undefined && !this.isOwnOrigin(origin, req)) {
        throw new ShroomsError('CROSS_SITE_REFUSED', `a page of ${JSON.stringify(origin.slice(0, 100))} may not act on this gateway`, {
          check: 'origin',
        });
      }
      const type = req.headers['content-type'];
      const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      if ((type !== undefined && !JSON_TYPE.test(type)) || (type === undefined && hasBody)) {
        const what = `a state change needs a JSON body (application/json or application/a2a+json), not ${JSON.stringify(String(type ?? 'none').slice(0, 100))}`;
        if (fromBrowserPage(req)) throw new ShroomsError('CROSS_SITE_REFUSED', `${what} from a browser page`, { check: 'content-type' });
        throw new ShroomsError('CONTENT_TYPE_NOT_SUPPORTED', what, { contentType: String(type ?? 'none').slice(0, 100) });
      }
    }
    return id;
  }

  private isOwnHost(req: FastifyRequest): boolean {
    const host = hostnameOf(req.headers.host);
    if (!host) return false;
    if (this.hosts.has(unmapped(host))) return true;
    // An address literal is this gateway when the connection arrived on it (no name to rebind).
    return isIP(host) !== 0 && unmapped(host) === unmapped(req.socket.localAddress ?? '');
  }

  /** Same scheme-less origin as the request's own Host (and that Host is one of ours). */
  private isOwnOrigin(origin: string, req: FastifyRequest): boolean {
    if (origin === 'null') return false;
    try {
      return new URL(origin).host.toLowerCase() === String(req.headers.host ?? '').toLowerCase();
    } catch {
      return false;
    }
  }
}

/**
 * Puts the door in front of every route of `app`. With `link`, a request that passes it while the
 * gateway has lost NATS is answered NATS_UNAVAILABLE (with Retry-After) at once (tasks/link.ts).
 */
export function registerDoors(app: FastifyInstance, doors: Doors, link?: { readonly down: ShroomsError | undefined }): void {
  app.addHook('onRequest', function door(req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) {
    if (OPEN_PATHS.has(req.url.split('?')[0]!)) return done();
    try {
      doors.check(req);
      const down = link?.down;
      if (down) throw down;
      done();
    } catch (err) {
      if (!(err instanceof ShroomsError)) return done(err as Error);
      const wait = err.retryAfterSeconds;
      if (wait !== undefined) reply.header('retry-after', String(wait));
      // The dashboard's page reads its own error shape; everything else gets the binding's.
      if (req.url.startsWith('/dashboard'))
        reply
          .code(err.spec.http)
          .header('cache-control', 'no-store')
          .send({ error: { key: err.key, code: err.spec.code, message: err.message } });
      else answerError(req, reply, err);
    }
  });
}
