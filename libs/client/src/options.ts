/**
 * What the client needs to know, and how it reads it from the environment of a session or a shell.
 *
 *   SHROOMS_GATEWAY_URL                 this machine's gateway (default http://127.0.0.1:7387;
 *                                       GATEWAY_URL, its old name, with a warning)
 *   SHROOMS_MACHINE                     this machine's name (default: asked from the gateway's card)
 *   SHROOMS_AGENT_SESSION               who is asking: SESSION or MACHINE/SESSION → metadata shrooms/from
 *   SHROOMS_TASK_ID                     the task the asker works on (MACHINE/SESSION:ID) → shrooms/parent
 *   TRACEPARENT                         W3C trace context of that work → shrooms/traceparent + header
 *   SHROOMS_GATEWAYS                    MACHINE=URL,… for machines whose sessions announce none
 *   NATS_URL, NATS_CREDS, NATS_USER, NATS_PASS, NATS_TOKEN   where the scheduler is asked
 */
import { withRenamedSettings } from '@shrooms/runtime';
import { z } from 'zod';

export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:7387';

export interface NatsSettings {
  url: string;
  user?: string;
  pass?: string;
  token?: string;
  creds?: string;
}

export interface ClientOptions {
  /** This machine's gateway. Default: SHROOMS_GATEWAY_URL, then http://127.0.0.1:7387. */
  gatewayUrl?: string;
  /** This machine's name. Default: SHROOMS_MACHINE, else the name on the gateway's machine card. */
  machine?: string;
  /** Who is asking: a session of this machine (`SESSION`) or `MACHINE/SESSION`. */
  as?: string;
  /** The task the asker is working on now (`MACHINE/SESSION:ID`), read at each call. */
  currentTask?: () => string | undefined;
  /**
   * W3C `traceparent` of the asker's current work, read at each call. The hook OpenTelemetry will
   * fill; until then the environment (TRACEPARENT) or the parent task's `shrooms/traceparent`.
   */
  traceparent?: () => string | undefined;
  /** Gateways of other machines when no signal names one: machine → URL. */
  gateways?: Readonly<Record<string, string>>;
  /** NATS for the scheduler's service (create/list/cancel). */
  nats?: NatsSettings;
  /** Per-request bound for calls that do not wait for a task, ms (default 30 s). */
  requestTimeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * `SHROOMS_GATEWAYS`: `laptop=http://10.0.0.1:7387,pi5=http://10.0.0.3:7387` → { laptop: 'http://10.0.0.1:7387', … }
 * (a trailing slash dropped); the items that are not MACHINE=http(s)://HOST… as `malformed`. The
 * client leaves those out; the scheduler's config refuses them.
 */
export function parseGatewayMap(text: string): { gateways: Record<string, string>; malformed: string[] } {
  const gateways: Record<string, string> = {};
  const malformed: string[] = [];
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = item.indexOf('=');
    const url = item
      .slice(eq + 1)
      .trim()
      .replace(/\/$/, '');
    if (eq <= 0 || !/^https?:\/\/\S+$/.test(url)) malformed.push(item);
    else gateways[item.slice(0, eq).trim()] = url;
  }
  return { gateways, malformed };
}

const GatewayMapSchema = z
  .string()
  .default('')
  .transform((text) => parseGatewayMap(text).gateways);

const empty = (v: unknown) => (v === '' ? undefined : v);
const opt = z.preprocess(empty, z.string().optional());

export const ClientEnvSchema = z
  .object({
    SHROOMS_GATEWAY_URL: opt,
    SHROOMS_MACHINE: opt,
    SHROOMS_AGENT_SESSION: opt,
    SHROOMS_TASK_ID: opt,
    TRACEPARENT: opt,
    SHROOMS_GATEWAYS: GatewayMapSchema,
    NATS_URL: z.preprocess(empty, z.string().default('nats://127.0.0.1:4222')),
    NATS_USER: opt,
    NATS_PASS: opt,
    NATS_TOKEN: opt,
    NATS_CREDS: opt,
  })
  .loose();
export type ClientEnv = z.infer<typeof ClientEnvSchema>;

/**
 * A gateway address as people type it: `localhost:7387` or `127.0.0.1:7387/` is
 * `http://localhost:7387` (no scheme used to read as a URL whose host was null); a trailing slash
 * is dropped.
 */
export function gatewayUrlOf(raw: string): string {
  const t = raw.trim();
  return (/^[a-z][a-z0-9+.-]*:\/\//i.test(t) ? t : `http://${t}`).replace(/\/+$/, '');
}

/** Client options from an environment (a session's, or a shell's). Explicit overrides win. */
export function clientOptionsFromEnv(env: Record<string, string | undefined> = process.env, overrides: ClientOptions = {}): ClientOptions {
  const e = ClientEnvSchema.parse(withRenamedSettings(env));
  return {
    gatewayUrl: gatewayUrlOf(e.SHROOMS_GATEWAY_URL ?? DEFAULT_GATEWAY_URL),
    ...(e.SHROOMS_MACHINE ? { machine: e.SHROOMS_MACHINE } : {}),
    ...(e.SHROOMS_AGENT_SESSION ? { as: e.SHROOMS_AGENT_SESSION } : {}),
    ...(e.SHROOMS_TASK_ID ? { currentTask: () => e.SHROOMS_TASK_ID } : {}),
    ...(e.TRACEPARENT ? { traceparent: () => e.TRACEPARENT } : {}),
    gateways: e.SHROOMS_GATEWAYS,
    nats: { url: e.NATS_URL, user: e.NATS_USER, pass: e.NATS_PASS, token: e.NATS_TOKEN, creds: e.NATS_CREDS },
    ...overrides,
    ...(overrides.gatewayUrl ? { gatewayUrl: gatewayUrlOf(overrides.gatewayUrl) } : {}),
  };
}

/** `00-<32 hex>-<16 hex>-<2 hex>`, not all-zero ids (W3C Trace Context §3.2). */
export function isTraceparent(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(v);
  return !!m && m[1] !== 'ff' && !/^0+$/.test(m[2]!) && !/^0+$/.test(m[3]!);
}
