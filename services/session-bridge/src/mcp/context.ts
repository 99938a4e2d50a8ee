/**
 * What the `shrooms` tools know about where they run, injectable so the bridge can host them for
 * its harness (machine, session, gateway, the task the session works on now) and a person's
 * `shrooms-agent mcp` can take it all from the environment.
 *
 *   SHROOMS_AGENT_SESSION      the session the tools serve (who asks; who may task_update)
 *   SHROOMS_MACHINE            this machine (default: the local gateway's card)
 *   SHROOMS_GATEWAY_URL / GATEWAY_URL   this machine's gateway
 *   SHROOMS_TASK_ID            the task the session works on (parent of its asks)
 *   TRACEPARENT                the trace of that work
 *   SHROOMS_ASK_PROGRESS_MS    how often a waiting ask_agent sends progress (default 15000)
 *   SHROOMS_ASK_MAX_WAIT_SECONDS  the longest wait of ask_agent and task_status (default and most 600):
 *                              below the agent's own MCP tool timeout, where it has a shorter one
 */
import { resolve } from 'node:path';
import { ShroomsClient, clientOptionsFromEnv, type ClientOptions } from '@shrooms/client';
import type { Part, Task, UpdateStatus } from '@shrooms/protocol';
import { McpEnvSchema } from '../config.js';

export const DEFAULT_PROGRESS_MS = 15_000;
export const MAX_WAIT_SECONDS = 600;

export interface McpToolContext {
  /** This machine. Default: SHROOMS_MACHINE, else asked from the gateway. */
  machine?: string;
  /** The session these tools serve (`SESSION`). Default: SHROOMS_AGENT_SESSION. */
  session?: string;
  /** This machine's gateway. Default: SHROOMS_GATEWAY_URL, GATEWAY_URL, http://127.0.0.1:7387. */
  gatewayUrl?: string;
  /** The task the session works on now (`SESSION:ID` or `MACHINE/SESSION:ID`), read at each call. */
  currentTask?: () => string | undefined;
  /** W3C traceparent of the current work, read at each call (OpenTelemetry's hook later). */
  traceparent?: () => string | undefined;
  /**
   * The session's folder: `task_update`'s relative `files` start from it, and a file whose real
   * path is outside it is refused (the tool runs without a prompt, with this process's rights).
   * Default: this process's working directory — `shrooms-agent mcp` is started by the harness in
   * the session's folder; the bridge passes its BRIDGE_CWD.
   */
  cwd?: string;
  /**
   * Environment the defaults come from (default: none): the bridge passes its own, `shrooms-agent
   * mcp` the shell's. Read through `McpEnvSchema` and `clientOptionsFromEnv`.
   */
  env?: Record<string, string | undefined>;
  /** Interval of progress notifications while ask_agent waits, ms. Default SHROOMS_ASK_PROGRESS_MS or 15 s. */
  progressIntervalMs?: number;
  /**
   * The longest wait of ask_agent and task_status, s: an agent that ends a tool call itself after a
   * time (Gemini CLI: 10 minutes, progress or not) must get the answer before. Default
   * SHROOMS_ASK_MAX_WAIT_SECONDS, else MAX_WAIT_SECONDS.
   */
  maxWaitSeconds?: number;
  /** A ready client (tests); the fields above are then ignored except `session` and `currentTask`. */
  client?: ShroomsClient;
  /**
   * The bridge hosting these tools, for the worker's own acts: `task_update` of a task of
   * `machine`/`session` calls it in-process instead of going out to the gateway and back.
   * Needs `machine` and `session`.
   */
  worker?: WorkerActs;
}

/** The session's own acts, done by its bridge. */
export interface WorkerActs {
  /** `taskId` is `SESSION:ID` of a task of this session. */
  update(taskId: string, status: UpdateStatus, text: string, parts?: Part[]): Promise<Task>;
  /** The worker asked `child` (MACHINE/SESSION:ID) while on its task `taskId` (SESSION:ID): kept for the cancel cascade. */
  asked?(taskId: string, child: string): Promise<void>;
}

export interface ResolvedContext {
  client: ShroomsClient;
  session?: string;
  currentTask: () => string | undefined;
  progressIntervalMs: number;
  /** The longest wait of ask_agent and task_status, s (see `McpToolContext.maxWaitSeconds`). */
  maxWaitSeconds: number;
  /** The session's folder, absolute (see `McpToolContext.cwd`). */
  cwd: string;
  /** The hosting bridge and the session it serves (see `McpToolContext.worker`). */
  worker?: WorkerActs & { machine: string; session: string };
}

export function resolveContext(ctx: McpToolContext = {}): ResolvedContext {
  const env = ctx.env ?? {};
  const settings = McpEnvSchema.parse(env);
  const session = ctx.session ?? (settings.SHROOMS_AGENT_SESSION || undefined);
  const currentTask = ctx.currentTask ?? (() => settings.SHROOMS_TASK_ID || undefined);
  const overrides: ClientOptions = {
    ...(ctx.machine ? { machine: ctx.machine } : {}),
    ...(ctx.gatewayUrl ? { gatewayUrl: ctx.gatewayUrl } : {}),
    ...(session ? { as: ctx.machine && !session.includes('/') ? `${ctx.machine}/${session}` : session } : {}),
    currentTask,
    ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
  };
  // Schedules go through the gateway too, as every other tool's request: the bridge's NATS user (a
  // session's or a machine's own) may not ask the scheduler, and the gateway names the owner from
  // the device, as for the CLI.
  const client = ctx.client ?? new ShroomsClient(clientOptionsFromEnv(env, overrides));
  const progressIntervalMs = ctx.progressIntervalMs ?? settings.SHROOMS_ASK_PROGRESS_MS ?? DEFAULT_PROGRESS_MS;
  const bare = session?.includes('/') ? session.slice(session.indexOf('/') + 1) : session;
  const worker =
    ctx.worker && ctx.machine && bare
      ? { update: ctx.worker.update, ...(ctx.worker.asked ? { asked: ctx.worker.asked } : {}), machine: ctx.machine, session: bare }
      : undefined;
  const cwd = resolve(ctx.cwd ?? process.cwd());
  const maxWaitSeconds = Math.min(ctx.maxWaitSeconds ?? settings.SHROOMS_ASK_MAX_WAIT_SECONDS ?? MAX_WAIT_SECONDS, MAX_WAIT_SECONDS);
  return { client, session, currentTask, progressIntervalMs, maxWaitSeconds, cwd, ...(worker ? { worker } : {}) };
}
