/**
 * The wire to one gateway: standard A2A through `@a2a-js/sdk`'s client (card discovery, JSON-RPC
 * first), plain JSON for `/agents` and the machine card, and plain JSON-RPC for the methods the SDK
 * does not know (our `AckTask`, `UpdateTask`, `ControlSession`).
 */
import type { Client } from '@a2a-js/sdk/client';
import { ShroomsError } from '@shrooms/protocol';
import { GatewayUnreachableError, fromJsonRpcError, normalizeError } from './errors.js';

export interface GatewayWireOptions {
  fetch?: typeof fetch;
  /** Bound on requests that do not wait for a task, ms. */
  requestTimeoutMs: number;
}

function withTimeout(ms: number, signal?: AbortSignal): AbortSignal {
  const t = AbortSignal.timeout(ms);
  return signal ? AbortSignal.any([t, signal]) : t;
}

/** Calls `fn`, turning what it throws into the client's errors; a timeout counts as unreachable. */
export async function guarded<T>(url: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if ((e as { name?: string } | null)?.name === 'TimeoutError') throw new GatewayUnreachableError(url, e);
    throw normalizeError(e, url);
  }
}

export class GatewayWire {
  private readonly clients = new Map<string, Promise<Client>>();
  private readonly doFetch: typeof fetch;

  constructor(private readonly o: GatewayWireOptions) {
    this.doFetch = o.fetch ?? ((...args) => fetch(...args));
  }

  /** `GET url` as JSON; REST error bodies become ShroomsError. */
  async getJson(url: string, signal?: AbortSignal): Promise<unknown> {
    return guarded(origin(url), async () => {
      const res = await this.doFetch(url, {
        headers: { accept: 'application/json', 'A2A-Version': '1.0' },
        signal: withTimeout(this.o.requestTimeoutMs, signal),
      });
      const body = await readJson(res, url);
      if (!res.ok) throw restError(body, res.status, url);
      return body;
    });
  }

  /** One JSON-RPC call about the machine (no session): `POST {gateway}/a2a`. */
  rpcMachine(gatewayUrl: string, method: string, params: unknown): Promise<unknown> {
    return this.post(`${gatewayUrl}/a2a`, gatewayUrl, method, params, {});
  }

  /** One JSON-RPC call to `POST {gateway}/a2a/{session}` (for our extension methods). */
  rpc(gatewayUrl: string, session: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<unknown> {
    return this.post(`${gatewayUrl}/a2a/${encodeURIComponent(session)}`, gatewayUrl, method, params, headers);
  }

  private async post(url: string, gatewayUrl: string, method: string, params: unknown, headers: Record<string, string>): Promise<unknown> {
    return guarded(gatewayUrl, async () => {
      const res = await this.doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'A2A-Version': '1.0', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: globalThis.crypto.randomUUID(), method, params }),
        signal: withTimeout(this.o.requestTimeoutMs),
      });
      const body = (await readJson(res, url)) as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
      if (body && typeof body === 'object' && body.error) throw fromJsonRpcError(body.error);
      if (!res.ok || !body || typeof body !== 'object' || !('result' in body)) {
        throw new ShroomsError('INVALID_AGENT_RESPONSE', `${url} answered HTTP ${res.status} without a JSON-RPC result`);
      }
      return body.result;
    });
  }

  /**
   * The SDK client of one session, from its card (`/a2a/{session}/.well-known/agent-card.json`).
   * Cached once the card was found; a missing session is asked again next time.
   */
  async a2a(gatewayUrl: string, session: string): Promise<Client> {
    const key = `${gatewayUrl} ${session}`;
    let p = this.clients.get(key);
    if (!p) {
      p = this.discover(gatewayUrl, session);
      this.clients.set(key, p);
      p.catch(() => this.clients.delete(key));
    }
    return p;
  }

  /** Timeout signal for an SDK call that does not wait for a task. */
  quick(signal?: AbortSignal): AbortSignal {
    return withTimeout(this.o.requestTimeoutMs, signal);
  }

  private async discover(gatewayUrl: string, session: string): Promise<Client> {
    // The card is fetched here rather than by the SDK's resolver so a missing session reads as the
    // gateway's own SESSION_NOT_FOUND instead of "Failed to fetch Agent Card: 404".
    const cardJson = await this.getJson(`${gatewayUrl}/a2a/${encodeURIComponent(session)}/.well-known/agent-card.json`);
    const fetchImpl = this.o.fetch;
    // The SDK's client (and its JOSE dependency) loads on a process's first discovery, not with the
    // library: a bridge holds a client for its cancel cascade that it may never use.
    const [{ AgentCard }, { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory }] = await Promise.all([
      import('@a2a-js/sdk'),
      import('@a2a-js/sdk/client'),
    ]);
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [
          new JsonRpcTransportFactory(fetchImpl ? { fetchImpl } : undefined),
          new RestTransportFactory(fetchImpl ? { fetchImpl } : undefined),
        ],
        preferredTransports: ['JSONRPC'],
      }),
    );
    return guarded(gatewayUrl, () => factory.createFromAgentCard(AgentCard.fromJSON(cardJson)));
  }
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

async function readJson(res: Response, url: string): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    throw new ShroomsError(
      'INVALID_AGENT_RESPONSE',
      `${url} answered HTTP ${res.status} with something that is not JSON: ${text.slice(0, 120)}`,
    );
  }
}

/** A `google.rpc.Status` body (or anything else) as a ShroomsError. */
function restError(body: unknown, status: number, url: string): ShroomsError {
  const e = (body as { error?: { message?: unknown; details?: unknown; status?: unknown } } | undefined)?.error;
  const reason = Array.isArray(e?.details)
    ? (e.details as { reason?: unknown }[]).find((d) => typeof d?.reason === 'string')?.reason
    : undefined;
  if (e && typeof reason === 'string') {
    const se = fromJsonRpcError({ message: e.message, data: e.details });
    if (se.key !== 'INTERNAL' || reason === 'INTERNAL') return se;
  }
  if (status === 404) return new ShroomsError('SESSION_NOT_FOUND', `${url}: not found`);
  return new ShroomsError('INVALID_AGENT_RESPONSE', `${url} answered HTTP ${status}`);
}
