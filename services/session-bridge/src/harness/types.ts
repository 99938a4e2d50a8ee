/**
 * The harness interface: what the bridge needs from the coding-agent process of one session.
 * One process per session, kept alive across turns; the bridge keeps its own queue and sends a
 * turn only when the harness is idle.
 */
import { UpdateStatusSchema, type Part } from '@shrooms/protocol';
import type { Logger } from '@shrooms/runtime';
import { z } from 'zod';

export type HarnessKind = 'claude' | 'pi' | 'acp' | 'echo' | 'tck';

/** starting → idle ⇄ busy; `waiting` = a permission prompt waits on the owner; `dead` = exited. */
export type HarnessState = 'starting' | 'idle' | 'busy' | 'waiting' | 'dead';

export interface TurnResult {
  status: 'completed' | 'failed' | 'cancelled';
  /** The model's final text of the turn (the worker's last words). */
  text: string;
  error?: string;
}

export interface PermissionRequest {
  /** Id to answer with `answerPermission`. */
  id: string;
  tool: string;
  input: unknown;
}

/** What the harness tells the bridge as it runs. All optional. */
export interface HarnessEvents {
  state?(state: HarnessState): void;
  /** A line of assistant text as it arrives (the bridge keeps the last one as `last_worker_line`). */
  text?(line: string): void;
  /** The agent wants permission to run a tool (Claude Code, ACP agents; shows as INPUT_REQUIRED). */
  permission?(req: PermissionRequest): void;
  /**
   * The model endpoint answers errors and the CLI retries (Claude Code's `api_retry`): what to tell
   * people, e.g. "the model endpoint answers 500; retrying (attempt 1 of 10)". The turn goes on; if
   * the retries run out the turn fails as usual.
   */
  trouble?(what: string): void;
  /** Number of background commands the session started that still run (the watchdog waits). */
  backgroundJobs?(n: number): void;
  exit?(code: number | null): void;
}

/**
 * How a harness without a model may end a turn's task: the worker's own statuses (`task_update`),
 * and for the `tck` harness the two states the A2A TCK's system under test must show, which no
 * worker tool offers: REJECTED and AUTH_REQUIRED.
 */
export const HarnessUpdateStatusSchema = z.enum([...UpdateStatusSchema.options, 'rejected', 'auth_required']);
export type HarnessUpdateStatus = z.infer<typeof HarnessUpdateStatusSchema>;

/** Lets a harness finish a task without a model (the echo and tck harnesses). */
export interface HarnessTools {
  taskUpdate(taskId: string, status: HarnessUpdateStatus, text: string, parts?: Part[]): Promise<void>;
}

export interface HarnessOptions {
  machine: string;
  session: string;
  /** Fixed working directory of the session (resume depends on it). */
  cwd: string;
  /** Where the harness keeps its own state (isolated HOME, session files, its session id). */
  stateDir: string;
  /** The system-prompt note (spec §8). */
  systemNote: string;
  /** URL of the session's MCP server over streamable HTTP on loopback (`http://127.0.0.1:PORT/mcp`). */
  mcpUrl: string;
  /** Run tools without asking (Claude Code `--permission-mode bypassPermissions`; pi always does). */
  autoApprove: boolean;
  /** Extra environment for the harness process (model endpoint, keys, OTEL_*, SHROOMS_*). */
  env: Record<string, string>;
  /** The bridge's own environment, which the process inherits under the adapter's settings (`harnessBaseEnv`). */
  baseEnv: Record<string, string>;
  /** Model id (`--model`); harness-specific default when absent. */
  model?: string;
  log: Logger;
  events: HarnessEvents;
  tools: HarnessTools;
  /**
   * The ACP agent (`acp` harness only): a preset by name, or a command line of one's own; how our
   * MCP server reaches it (`auto`: HTTP when the agent takes it, else stdio through a relay).
   */
  acp?: { agent?: string; agentCommand?: string; mcp?: 'auto' | 'http' | 'stdio' };
  /** How long `cancel` waits for the turn to end before killing the process, ms. */
  cancelGraceMs?: number;
}

export interface Harness {
  readonly kind: HarnessKind;
  readonly state: HarnessState;
  /** Spawns the process (resuming the session if it ran before) and waits until it is ready. */
  start(): Promise<void>;
  /**
   * Sends one user message as one turn and resolves when the turn ends. `taskId` is the task the
   * turn works on (for harnesses that finish tasks themselves). Rejects if the process dies.
   */
  send(turnId: string, text: string, taskId?: string): Promise<TurnResult>;
  /** Interrupts the running turn; the process stays usable. Resolves when the turn has ended. */
  cancel(): Promise<void>;
  answerPermission(id: string, allow: boolean): void;
  /** Stops the process (EOF, then signals). */
  stop(): Promise<void>;
  /**
   * Why the last start could not continue the session's earlier conversation and began a new one
   * (the acp harness, when the agent cannot load it); undefined when it continued or there was none.
   */
  readonly conversationLost?: string;
}
