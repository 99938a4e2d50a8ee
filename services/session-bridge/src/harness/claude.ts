/**
 * The Claude Code adapter: one long-lived `claude -p --input-format stream-json --output-format
 * stream-json --verbose` per session. Facts checked against the real 2.1.197:
 *
 * - Session: `--session-id <uuid>` on the first run, `--resume <uuid>` once a transcript exists. The
 *   id is kept in `stateDir/claude-session.json`; resume is scoped to the cwd, so a changed cwd starts
 *   a new session.
 * - Ready: the `initialize` control request is answered.
 * - A turn: one `user` line in, exactly one `result` out. `--replay-user-messages` echoes our line
 *   with our uuid just before its turn's output; Claude Code also runs turns of its own (when a
 *   background command finishes it tells the model, unasked), so the turn's `result` is the first
 *   one after our echo. `is_error` is the truth, not `subtype`.
 * - Cancel: the `interrupt` control request (the process stays); if no `result` comes within
 *   `cancelGraceMs`, SIGINT, then SIGKILL, and a respawn with `--resume`.
 * - Permissions: `--permission-prompt-tool stdio` makes the CLI ask us with a `can_use_tool` control
 *   request (as the Agent SDKs do). We relay it (`events.permission`, state `waiting`) and answer it
 *   with `answerPermission`. An interrupt while one waits gets a `control_cancel_request`.
 * - Model trouble: on an HTTP error from the model endpoint Claude Code retries (`CLAUDE_CODE_MAX_RETRIES`,
 *   default 10, with backoff) and says so with `system/api_retry` before each wait: told to the bridge
 *   (`events.trouble`), which shows it on the task. When the retries run out, the `result` is an error.
 * - Background commands: `system/task_started` and `system/task_updated`/`task_notification` (a
 *   terminal status) — counted for the watchdog (`events.backgroundJobs`).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { claudeCommand } from './binaries.js';
import { claudeSession } from './claude-session.js';
import type { JsonlChild } from './child.js';
import {
  ClaudeEventSchema,
  type ClaudeControlRequest,
  type ClaudeControlResponse,
  type ClaudeEvent,
  type ClaudeResultEvent,
  type ClaudeSystemEvent,
} from './claude-events.js';
import { CliHarness, READY_TIMEOUT_MS, type CallRequest, type Launch, type Turn } from './cli-harness.js';
import { OpenPrompts } from './prompts.js';
import { MODEL_ENV, modelBaseUrl, modelSetting } from './env.js';
import type { HarnessState, TurnResult } from './types.js';
import { READ_ONLY_TOOLS } from './read-only-tools.js';

/** The MCP server's name as Claude Code sees it: tools are `mcp__shrooms__<tool>`. */
export const CLAUDE_MCP_SERVER = 'shrooms';
const DENY_MESSAGE = 'The owner of this session did not allow this tool call.';

/** `--mcp-config` for a session: its `shrooms` server over streamable HTTP. */
export function claudeMcpConfig(mcpUrl: string): { mcpServers: Record<string, { type: 'http'; url: string }> } {
  return { mcpServers: { [CLAUDE_MCP_SERVER]: { type: 'http', url: mcpUrl } } };
}

/** Our line of the turn, by uuid; once it came back (`isReplay`) the next `result` is this turn's. */
interface ClaudeTurn {
  uuid: string;
  replayed: boolean;
}

export class ClaudeHarness extends CliHarness<ClaudeEvent, ClaudeControlResponse, ClaudeTurn> {
  readonly kind = 'claude' as const;
  protected readonly events = ClaudeEventSchema;
  protected readonly hardStopSignal = 'SIGINT';
  /** Claude Code is running a turn of its own (a background command finished). */
  private ownTurnRunning = false;
  private readonly permissions = new OpenPrompts<{ input: unknown }>(
    { get: () => this._state, set: (s) => this.setState(s) },
    () => this.log,
  );
  private readonly background = new Set<string>();

  protected async handshake(): Promise<void> {
    await this.call({ subtype: 'initialize' }, READY_TIMEOUT_MS);
  }

  /** Folders, the session id (resume or new), the MCP config and note files; the command line. */
  protected async launch(): Promise<Launch> {
    const o = this.opts;
    const home = o.env.HOME ?? join(o.stateDir, 'claude-home');
    await mkdir(o.stateDir, { recursive: true });
    await mkdir(home, { recursive: true });
    const configDir = o.env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
    const { sessionId, resume } = await claudeSession(o.stateDir, o.cwd, configDir, this.log);
    this._sessionId = sessionId;

    const mcpFile = join(o.stateDir, 'claude-mcp.json');
    await writeFile(mcpFile, JSON.stringify(claudeMcpConfig(o.mcpUrl)));
    const noteFile = join(o.stateDir, 'claude-system-note.md');
    await writeFile(noteFile, o.systemNote);

    const model = o.model ?? modelSetting(o, MODEL_ENV.model);
    const baseUrl = modelSetting(o, MODEL_ENV.baseUrl);
    const apiKey = modelSetting(o, MODEL_ENV.apiKey);
    const args = [
      '-p',
      '--input-format',
      'stream-json',
      '--output-format',
      'stream-json',
      '--verbose',
      '--replay-user-messages',
      ...(resume ? ['--resume', sessionId] : ['--session-id', sessionId]),
      '--append-system-prompt-file',
      noteFile,
      '--mcp-config',
      mcpFile,
      '--strict-mcp-config',
      '--permission-prompt-tool',
      'stdio',
      '--permission-mode',
      o.autoApprove ? 'bypassPermissions' : 'default',
      '--allowedTools',
      READ_ONLY_TOOLS.map((t) => `mcp__${CLAUDE_MCP_SERVER}__${t}`).join(','),
      ...(model ? ['--model', model] : []),
    ];
    const env: Record<string, string> = {
      ...o.baseEnv,
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: '1',
      // ask_agent may wait 10 minutes for its answer.
      MCP_TOOL_TIMEOUT: '900000',
      SHROOMS_AGENT_SESSION: `${o.machine}/${o.session}`,
      ...(baseUrl ? { ANTHROPIC_BASE_URL: modelBaseUrl(baseUrl, 'anthropic') } : {}),
      ...(apiKey ? { ANTHROPIC_API_KEY: apiKey } : {}),
      // bypassPermissions is refused for root unless the CLI is told it runs in a sandbox.
      ...(o.autoApprove && process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}),
      ...o.env,
      HOME: home,
    };
    return { command: claudeCommand(env), args, env, logInfo: { sessionId: this._sessionId, resume } };
  }

  protected turnData(): ClaudeTurn {
    return { uuid: randomUUID(), replayed: false };
  }

  protected turnState(): HarnessState {
    return this.permissions.turnState();
  }

  protected writeTurn(turn: Turn<ClaudeTurn>, text: string, proc: JsonlChild): void {
    proc.write({
      type: 'user',
      uuid: turn.data.uuid,
      session_id: this._sessionId ?? '',
      parent_tool_use_id: null,
      message: { role: 'user', content: text },
    });
  }

  protected writeCall(id: string, request: CallRequest, proc: JsonlChild): void {
    proc.write({ type: 'control_request', request_id: id, request });
  }

  protected interrupt(graceMs: number): void {
    this.call({ subtype: 'interrupt' }, graceMs).catch((err) => this.log.warn({ err }, 'claude did not answer the interrupt'));
  }

  answerPermission(id: string, allow: boolean): void {
    const p = this.permissions.get(id);
    if (!p) return;
    const response = allow ? { behavior: 'allow', updatedInput: p.input ?? {} } : { behavior: 'deny', message: DENY_MESSAGE };
    this.proc?.write({ type: 'control_response', response: { subtype: 'success', request_id: id, response } });
    this.permissions.close(id);
  }

  protected exited(): void {
    this.permissions.clear();
    this.ownTurnRunning = false;
    if (this.background.size) {
      this.background.clear();
      this.opts.events.backgroundJobs?.(0);
    }
  }

  // ---- the stream -----------------------------------------------------------------------------

  protected onEvent(ev: ClaudeEvent): void {
    switch (ev.type) {
      case 'control_response':
        return this.onControlResponse(ev.response);
      case 'control_request':
        return this.onControlRequest(ev);
      case 'control_cancel_request':
        // The prompt was withdrawn (an interrupt while it waited).
        this.permissions.close(ev.request_id);
        return;
      case 'user':
        if (ev.isReplay === true && this.turn && ev.uuid === this.turn.data.uuid) this.turn.data.replayed = true;
        return;
      case 'assistant':
        for (const block of ev.message.content ?? []) if (block.type === 'text' && block.text !== undefined) this.said(block.text);
        return;
      case 'result':
        return this.onResult(ev);
      case 'system':
        return this.onSystem(ev);
    }
  }

  private onSystem(ev: ClaudeSystemEvent): void {
    if (ev.subtype === 'api_retry') {
      const answers = ev.error_status ? `answers ${ev.error_status}` : `fails${ev.error ? ` (${ev.error})` : ''}`;
      const attempt = ev.attempt !== undefined && ev.max_retries !== undefined ? ` (attempt ${ev.attempt} of ${ev.max_retries})` : '';
      this.opts.events.trouble?.(`the model endpoint ${answers}; retrying${attempt}`);
    } else if (ev.subtype === 'session_state_changed' && ev.state === 'running' && !this.turn) {
      // Claude Code started a turn of its own (a background command finished).
      this.ownTurnRunning = true;
      if (this._state === 'idle') this.setState('busy');
    } else if (ev.subtype === 'task_started' && ev.task_id !== undefined) {
      this.background.add(ev.task_id);
      this.opts.events.backgroundJobs?.(this.background.size);
    } else if ((ev.subtype === 'task_updated' || ev.subtype === 'task_notification') && ev.task_id !== undefined) {
      const status = ev.subtype === 'task_updated' ? ev.patch?.status : ev.status;
      if (ev.subtype === 'task_notification' && !this.turn?.data.replayed) this.ownTurnRunning = true;
      if (status !== undefined && !['running', 'pending'].includes(status) && this.background.delete(ev.task_id)) {
        this.opts.events.backgroundJobs?.(this.background.size);
      }
    }
  }

  private onResult(ev: ClaudeResultEvent): void {
    const turn = this.turn;
    const ours = turn !== undefined && (turn.data.replayed || !this.ownTurnRunning);
    this.ownTurnRunning = false;
    if (!ours) {
      this.log.debug({ isError: ev.is_error }, 'claude finished a turn of its own');
      if (!turn && this._state === 'busy') this.setState('idle');
      return;
    }
    this.permissions.clear();
    this.finish(turn, turnResult(ev, turn));
  }

  private onControlRequest(ev: ClaudeControlRequest): void {
    const id = ev.request_id;
    const req = ev.request;
    if (req.subtype === 'can_use_tool') {
      if (!this.opts.events.permission) {
        // Nobody to ask: refuse rather than hang the turn.
        this.proc?.write({
          type: 'control_response',
          response: { subtype: 'success', request_id: id, response: { behavior: 'deny', message: DENY_MESSAGE } },
        });
        return;
      }
      this.permissions.add(id, { input: req.input });
      this.opts.events.permission({ id, tool: req.tool_name ?? '', input: req.input });
      return;
    }
    this.proc?.write({
      type: 'control_response',
      response: { subtype: 'error', request_id: id, error: `not supported by the shrooms bridge: ${req.subtype}` },
    });
  }

  private onControlResponse(response: ClaudeControlResponse): void {
    // Claude Code also echoes our answers to its own requests: those have no waiter.
    const id = response.request_id ?? '';
    if (response.subtype === 'error') this.answered(id, { error: new Error(response.error ?? 'control request failed') });
    else this.answered(id, { result: response });
  }
}

/** What a `result` says of our turn. */
function turnResult(ev: ClaudeResultEvent, turn: Turn<ClaudeTurn>): TurnResult {
  const text = ev.result ?? turn.lastText;
  if (ev.is_error !== true) return { status: 'completed', text };
  if (turn.cancelRequested || /abort/.test(ev.terminal_reason ?? '')) return { status: 'cancelled', text: turn.lastText };
  const errors = ev.errors ? ev.errors.map(String).join('; ') : '';
  return { status: 'failed', text: turn.lastText, error: ev.result || errors || (ev.subtype ?? 'error') };
}
