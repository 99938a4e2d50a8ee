import { BaseConfigSchema, HealthConfigSchema, envBool } from '@shrooms/runtime';
import { DEFAULT_LIMITS, DEFAULT_SIGNAL_TTL_MS, NAME_RULE, isValidName } from '@shrooms/protocol';
import { z } from 'zod';

const ms = (d: number) => z.coerce.number().int().positive().default(d);

export const BridgeConfigSchema = BaseConfigSchema.extend(HealthConfigSchema.shape).extend({
  BRIDGE_SESSION: z.string().refine(isValidName, `not a valid session name: use ${NAME_RULE}`),
  BRIDGE_HARNESS: z.enum(['claude', 'pi', 'acp', 'echo', 'tck']).default('echo'),
  /** acp harness: a known agent (`gemini`, `opencode`) … */
  BRIDGE_ACP_AGENT: z.string().optional(),
  /** … or the command line of any ACP agent (it wins over BRIDGE_ACP_AGENT). */
  BRIDGE_ACP_COMMAND: z.string().optional(),
  /** acp harness: our MCP server over HTTP when the agent takes it, else stdio (a relay); or forced. */
  BRIDGE_ACP_MCP: z.enum(['auto', 'http', 'stdio']).default('auto'),
  BRIDGE_CWD: z.string().default(() => process.cwd()),
  /** Where the bridge keeps the harness's state (session ids, isolated HOME). */
  BRIDGE_STATE_DIR: z.string().optional(),
  /** The base of the default BRIDGE_STATE_DIR (XDG; default ~/.local/state). */
  XDG_STATE_HOME: z.string().optional(),
  /**
   * Where the bridge's log goes besides stderr: default `bridge.log` in BRIDGE_STATE_DIR; `off` for
   * none (`up` keeps its parts' output itself). `shrooms-agent logs SESSION` follows it.
   */
  BRIDGE_LOG_FILE: z.string().optional(),
  /** The session runs tools without asking (pi always does). */
  BRIDGE_AUTO_APPROVE: envBool(false),
  /** When another bridge serves the session: wait and take it over when that one stops, instead of exiting. */
  BRIDGE_STANDBY: envBool(false),
  /** The gateway that serves this machine, announced in the signal field (old name GATEWAY_URL). */
  SHROOMS_GATEWAY_URL: z.string().default('http://127.0.0.1:7387'),
  BRIDGE_MODEL: z.string().optional(),
  /** Echo harness only: wait this long before finishing each task (a slow worker for demos and tests). */
  ECHO_DELAY_MS: z.coerce.number().int().min(0).default(0),
  /** Port of the session's MCP server on loopback (0 = any free port). */
  BRIDGE_MCP_PORT: z.coerce.number().int().min(0).default(0),
  BRIDGE_SIGNAL_TTL_MS: ms(DEFAULT_SIGNAL_TTL_MS),
  /**
   * How long a task's start, and a blocking send's new task, may wait to be written so that they go
   * with the task's next change (a quick worker's result): one write instead of two or three. 0
   * writes each at once. See docs/reliability.md.
   */
  BRIDGE_WRITE_WAIT_MS: z.coerce.number().int().min(0).default(100),
  /** A task whose harness died while working on it is delivered again this many times, then failed. */
  BRIDGE_REDELIVERIES: z.coerce.number().int().min(0).default(1),
  LIMIT_QUEUE_LENGTH: ms(DEFAULT_LIMITS.queueLength),
  LIMIT_OPEN_TASKS: ms(DEFAULT_LIMITS.openTasksPerSession),
  LIMIT_TASK_BYTES: ms(DEFAULT_LIMITS.taskBytes),
  // Watchdog (spec §5): first reminder after this much quiet, then the ladder; all in ms.
  WATCHDOG_FIRST_MS: z.coerce.number().int().positive().optional(),
  WATCHDOG_LADDER_MS: z.string().default('60000,120000,300000,600000,1800000'),
  WATCHDOG_MAX_PER_HOUR: z.coerce.number().int().positive().default(6),
  WATCHDOG_HOUR_MS: ms(3_600_000),
  WATCHDOG_TICK_MS: ms(1_000),
});
export type BridgeConfig = z.infer<typeof BridgeConfigSchema>;

/** The quiet before the watchdog's first reminder, ms: `WATCHDOG_FIRST_MS`, else 2 min for pi, 5 min for the others. */
export function watchdogFirstMs(config: Pick<BridgeConfig, 'WATCHDOG_FIRST_MS' | 'BRIDGE_HARNESS'>): number {
  return config.WATCHDOG_FIRST_MS ?? (config.BRIDGE_HARNESS === 'pi' ? 120_000 : 300_000);
}

/** Set by a surrounding Claude Code session; inherited, they would confuse the child CLI. */
const SESSION_MARKERS = ['CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT', 'CLAUDE_CODE_SSE_PORT', 'CLAUDE_AGENT_SDK_VERSION'];

/**
 * The bridge's own NATS login — every `NATS_*` setting of the base config: the URL (which may carry
 * a user and password), user, password, token, credentials file. Kept from the harness, so neither
 * the agent nor a command it runs can speak NATS as the bridge: the session reaches the mesh through
 * the bridge's MCP tools and the CLI, which talks to the gateway over HTTP (session-cli.ts).
 */
export const BRIDGE_SECRETS: readonly string[] = Object.freeze(Object.keys(BaseConfigSchema.shape).filter((k) => k.startsWith('NATS_')));

/**
 * What of the bridge's environment a harness process never inherits, by name (why each, and what
 * the agent still gets: docs/security.md, "What a session's agent gets"):
 * - `NATS_*`, every one: the bridge's login (BRIDGE_SECRETS) and any other NATS credential in its
 *   environment (the deploy's `NATS_*_PASSWORD`, a seed or a JWT);
 * - the OpenTelemetry exporter's secrets: `OTEL_EXPORTER_OTLP_HEADERS` and its per-signal forms
 *   (an `authorization` header with the collector's token), and the TLS client keys;
 * - `BRIDGE_*`: the bridge's own settings, which reach the harness through its options when it
 *   needs them, never through its environment (an `--agent-command` may carry a key);
 * - the other services' settings, `GATEWAY_*` (but `GATEWAY_URL`, a name the CLI in the session
 *   reads), `GUARD_*` and `SCHEDULER_*`: `up` runs every part with one environment, and an agent
 *   has no use for the policy file's path or the guard's limits;
 * - the markers of a Claude Code session the bridge itself may run in.
 * The rest is the person's environment, which a coding agent works in (PATH, HOME, locale, proxies,
 * toolchains, SSH_AUTH_SOCK, the model keys the operator set): not withheld.
 */
export function withheldFromHarness(name: string): boolean {
  return (
    name.startsWith('NATS_') ||
    name.startsWith('BRIDGE_') ||
    (name.startsWith('GATEWAY_') && name !== 'GATEWAY_URL') ||
    name.startsWith('GUARD_') ||
    name.startsWith('SCHEDULER_') ||
    /^OTEL_EXPORTER_OTLP_(?:(?:TRACES|METRICS|LOGS)_)?(?:HEADERS|CLIENT_KEY)$/.test(name) ||
    SESSION_MARKERS.includes(name)
  );
}

/**
 * The bridge's environment as a harness process inherits it (PATH, LANG, proxies, the operator's
 * model keys, the model settings), without what `withheldFromHarness` names. The one place a
 * harness's environment is filtered: every harness (claude, pi, acp) starts from this, adds its
 * own settings and `HarnessOptions.env`.
 */
export function harnessBaseEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !withheldFromHarness(k)) out[k] = v;
  return out;
}

/**
 * What the `shrooms` MCP tools take from an environment (a session's, or the shell of
 * `shrooms-agent mcp`) besides the client options (`clientOptionsFromEnv`). A progress interval
 * that is not a positive number leaves the default.
 */
export const McpEnvSchema = z
  .object({
    SHROOMS_AGENT_SESSION: z.string().optional(),
    SHROOMS_TASK_ID: z.string().optional(),
    SHROOMS_ASK_PROGRESS_MS: z
      .string()
      .optional()
      .transform((v) => (Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : undefined)),
    /** The longest ask_agent / task_status wait, s (1–600): below the agent's own MCP tool timeout. */
    SHROOMS_ASK_MAX_WAIT_SECONDS: z.coerce.number().int().min(1).max(600).optional(),
  })
  .loose();
export type McpEnv = z.infer<typeof McpEnvSchema>;
