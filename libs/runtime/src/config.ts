/**
 * Config: one zod schema per service over the environment, parsed once, frozen. Names carry their
 * units (`…_MS`, `…_BYTES`). A bad value stops the service at start with every problem listed.
 */
import { hostname } from 'node:os';
import { z } from 'zod';

/** Settings every service shares. */
export const BaseConfigSchema = z.object({
  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  NATS_USER: z.string().optional(),
  NATS_PASS: z.string().optional(),
  NATS_CREDS: z.string().optional(),
  NATS_TOKEN: z.string().optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** `text` (time LEVEL [part] message), `json` (pino's lines), or `auto`: text on a terminal, JSON elsewhere. */
  LOG_FORMAT: z.enum(['auto', 'text', 'json']).default('auto'),
  /** This machine's name on the mesh (the MACHINE of `MACHINE/SESSION`). */
  SHROOMS_MACHINE: z.string().default(() => hostname().split('.')[0] || 'localhost'),
  /** JetStream replicas for the ledger and buckets: 1 locally, 3 in production. */
  SHROOMS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
});
export type BaseConfig = z.infer<typeof BaseConfigSchema>;

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Settings that had another name (one name per setting across every command): the old name is
 * still read when the new one is not set, with one line saying so.
 */
export const RENAMED_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  GATEWAY_URL: 'SHROOMS_GATEWAY_URL',
  SCHEDULER_GATEWAY_URL: 'SHROOMS_GATEWAY_URL',
  SCHEDULER_GATEWAYS: 'SHROOMS_GATEWAYS',
});

const warnedRenames = new Set<string>();

/** `env` with each old name's value under its new name (unless set), warning once per name and process. */
export function withRenamedSettings(
  env: Record<string, string | undefined>,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Record<string, string | undefined> {
  let out = env;
  for (const [old, now] of Object.entries(RENAMED_SETTINGS)) {
    if (env[old] === undefined || env[old] === '') continue;
    const used = env[now] === undefined || env[now] === '';
    if (used) out = { ...out, [now]: env[old] };
    if (!warnedRenames.has(old)) {
      warnedRenames.add(old);
      warn(`${old} is an old name: use ${now}${used ? '' : ` (set too, so ${old} is ignored)`}`);
    }
  }
  return out;
}

export function loadConfig<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): Readonly<z.infer<S>> {
  const result = schema.safeParse(withRenamedSettings(env));
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  return Object.freeze(result.data);
}

/**
 * A boolean env var: `1`, `true`, `yes`, `on` are true; `0`, `false`, `no`, `off` false (any case);
 * unset or empty, `dflt`. Anything else is refused at start: a mistyped `enabled` read as false would
 * quietly turn off what its owner meant to turn on.
 */
export const envBool = (dflt: boolean) =>
  z
    .union([
      z.boolean(),
      z
        .string()
        .trim()
        .regex(/^(1|true|yes|on|0|false|no|off|)$/i, 'give 1, true, yes or on; 0, false, no or off'),
    ])
    .optional()
    .transform((v) => (v === undefined || v === '' ? dflt : typeof v === 'boolean' ? v : /^(1|true|yes|on)$/i.test(v)));

/** A command line as it may be logged: its first word, the rest withheld (it may carry a key: `env API_KEY=… agent`). */
function commandName(line: string): string {
  const [first = '', ...rest] = line.trim().split(/\s+/);
  return rest.length ? `${first} … (${rest.length} more words withheld)` : first;
}

/** Config as it may be logged: anything that looks like a secret is masked. */
export function redactConfig(config: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config))
    out[k] =
      /PASS|TOKEN|SECRET|CREDS|KEY/i.test(k) && v ? '***' : /COMMAND$/.test(k) && typeof v === 'string' ? commandName(v) : redactUrls(v);
  return out;
}

/** `nats://user:secret@host` → `nats://user:***@host` (and `nats://token@host` → `nats://***@host`), in any string. */
export function redactUrls<T>(value: T): T {
  if (typeof value !== 'string') return value;
  return value.replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@:]*)(:[^\s/@]*)?@/gi, (_m, scheme: string, user: string, pass?: string) =>
    pass ? `${scheme}${user}:***@` : `${scheme}***@`,
  ) as T;
}
