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
 * - Background commands: `system/task_started` and `system/task_updated`/`task_notification` (a
 *   terminal status) — counted for the watchdog (`events.backgroundJobs`).
 */
import { randomUUID } from 'node:crypto';
import { access, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { claudeCommand } from './binaries.js';
import { ProcessHarness } from './process-harness.js';
import { JsonlChild, within, type ChildExit } from './child.js';
import { inheritedEnv, MODEL_ENV, modelSetting } from './env.js';
import type { Harness, HarnessOptions, HarnessState, TurnResult } from './types.js';

/** The MCP server's name as Claude Code sees it: tools are `mcp__shrooms__<tool>`. */
export const CLAUDE_MCP_SERVER = 'shrooms';
/** Tools that only read: allowed without asking. Every other tool asks unless `autoApprove`. */
/**
 * Tools that run without asking: reading the mesh and the session's own task bookkeeping (finishing
 * the task it was given, acknowledging an answer). Asking another agent or scheduling work makes
 * work elsewhere, so those ask unless the session auto-approves.
 */
export const CLAUDE_READ_ONLY_TOOLS = ['list_agents', 'task_status', 'task_update', 'task_ack', 'list_schedules'];

const READY_TIMEOUT_MS = 60_000;
const DEFAULT_CANCEL_GRACE_MS = 10_000;
const SIGINT_GRACE_MS = 2_000;
const DENY_MESSAGE = 'The owner of this session did not allow this tool call.';

/** `--mcp-config` for a session: its `shrooms` server over streamable HTTP. */
export function claudeMcpConfig(mcpUrl: string): { mcpServers: Record<string, { type: 'http'; url: string }> } {
  return { mcpServers: { [CLAUDE_MCP_SERVER]: { type: 'http', url: mcpUrl } } };
}

interface Turn {
  id: string;
  uuid: string;
  /** Our line came back (`isReplay`): the next `result` is this turn's. */
  replayed: boolean;
  cancelRequested: boolean;
  lastText: string;
  resolve(r: TurnResult): void;
  reject(e: Error): void;
  ended: Promise<void>;
}

interface StoredSession {
  sessionId: string;
  cwd: string;
}

type Event = Record<string, unknown> & { type?: string; subtype?: string };

export class ClaudeHarness extends ProcessHarness implements Harness {
  readonly kind = 'claude' as const;
  private turn?: Turn;
  /** Claude Code is running a turn of its own (a background command finished). */
  private ownTurnRunning = false;
  private readonly permissions = new Map<string, { input: unknown }>();
  private readonly controls = new Map<string, { resolve(r: Event): void; reject(e: Error): void }>();
  private readonly background = new Set<string>();
  private controlSeq = 0;
  /** Set while we kill and respawn the process ourselves: no `exit` event for that. */
  private respawning = false;
  /** The process that answered `initialize`; one that never did ends in a rejected `start()`, not an `exit`. */
  private readyProc?: JsonlChild;

  protected async spawnAndWait(): Promise<void> {
    this.setState('starting');
    const { args, env } = await this.prepare();
    const cmd = claudeCommand(env);
    this.log.info(
      { command: cmd.command, sessionId: this._sessionId, resume: args.includes('--resume'), cwd: this.opts.cwd },
      'starting claude',
    );
    const proc = new JsonlChild(cmd, args, {
      cwd: this.opts.cwd,
      env,
      log: this.log,
      onValue: (v) => this.onEvent(v as Event),
      onExit: (e) => this.onExit(proc, e),
    });
    this.proc = proc;
    try {
      await this.control({ subtype: 'initialize' }, READY_TIMEOUT_MS);
    } catch (err) {
      await proc.kill();
      throw new Error(`claude did not get ready: ${(err as Error).message}${proc.stderrTail() ? `; stderr: ${proc.stderrTail()}` : ''}`);
    }
    this.readyProc = proc;
    this.setState(this.turn ? 'busy' : 'idle');
  }

  /** Folders, the session id (resume or new), the MCP config and note files; the command line. */
  private async prepare(): Promise<{ args: string[]; env: Record<string, string> }> {
    const o = this.opts;
    const home = o.env.HOME ?? join(o.stateDir, 'claude-home');
    await mkdir(o.stateDir, { recursive: true });
    await mkdir(home, { recursive: true });
    const configDir = o.env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
    const file = join(o.stateDir, 'claude-session.json');
    const stored = await readFile(file, 'utf8').then(
      (t) => JSON.parse(t) as StoredSession,
      () => undefined,
    );
    const resume = stored !== undefined && stored.cwd === o.cwd && (await transcriptExists(configDir, stored.sessionId));
    if (stored && stored.cwd !== o.cwd)
      this.log.warn({ was: stored.cwd, now: o.cwd }, 'the session directory changed; claude starts a new conversation');
    this._sessionId = resume ? stored.sessionId : randomUUID();
    await writeFile(file, JSON.stringify({ sessionId: this._sessionId, cwd: o.cwd } satisfies StoredSession));

    const mcpFile = join(o.stateDir, 'claude-mcp.json');
    await writeFile(mcpFile, JSON.stringify(claudeMcpConfig(o.mcpUrl)));
    const noteFile = join(o.stateDir, 'claude-system-note.md');
    await writeFile(noteFile, o.systemNote);

    const model = o.model ?? modelSetting(o.env, MODEL_ENV.model);
    const baseUrl = modelSetting(o.env, MODEL_ENV.baseUrl);
    const apiKey = modelSetting(o.env, MODEL_ENV.apiKey);
    const args = [
      '-p',
      '--input-format',
      'stream-json',
      '--output-format',
      'stream-json',
      '--verbose',
      '--replay-user-messages',
      ...(resume ? ['--resume', this._sessionId] : ['--session-id', this._sessionId]),
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
      CLAUDE_READ_ONLY_TOOLS.map((t) => `mcp__${CLAUDE_MCP_SERVER}__${t}`).join(','),
      ...(model ? ['--model', model] : []),
    ];
    const env: Record<string, string> = {
      ...inheritedEnv(),
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: '1',
      // ask_agent may wait 10 minutes for its answer.
      MCP_TOOL_TIMEOUT: '900000',
      SHROOMS_AGENT_SESSION: `${o.machine}/${o.session}`,
      ...(baseUrl ? { ANTHROPIC_BASE_URL: baseUrl } : {}),
      ...(apiKey ? { ANTHROPIC_API_KEY: apiKey } : {}),
      // bypassPermissions is refused for root unless the CLI is told it runs in a sandbox.
      ...(o.autoApprove && process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}),
      ...o.env,
      HOME: home,
    };
    return { args, env };
  }

  async send(turnId: string, text: string): Promise<TurnResult> {
    if (this.starting) await this.starting;
    const proc = this.proc;
    if (!proc?.alive) throw new Error('claude is not running');
    if (this.turn) throw new Error(`claude is already running turn ${this.turn.id}`);
    let resolve!: (r: TurnResult) => void;
    let reject!: (e: Error) => void;
    const result = new Promise<TurnResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const turn: Turn = {
      id: turnId,
      uuid: randomUUID(),
      replayed: false,
      cancelRequested: false,
      lastText: '',
      resolve,
      reject,
      ended: result.then(
        () => undefined,
        () => undefined,
      ),
    };
    this.turn = turn;
    this.setState(this.permissions.size ? 'waiting' : 'busy');
    this.log.debug({ turnId, uuid: turn.uuid }, 'claude turn sent');
    proc.write({
      type: 'user',
      uuid: turn.uuid,
      session_id: this._sessionId ?? '',
      parent_tool_use_id: null,
      message: { role: 'user', content: text },
    });
    return result;
  }

  async cancel(): Promise<void> {
    const turn = this.turn;
    const proc = this.proc;
    if (!turn || !proc) return;
    turn.cancelRequested = true;
    this.control({ subtype: 'interrupt' }, this.opts.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS).catch((err) =>
      this.log.warn({ err }, 'claude did not answer the interrupt'),
    );
    if (await within(turn.ended, this.opts.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS)) return;
    this.log.warn({ turnId: turn.id }, 'claude did not end the turn after an interrupt; restarting it');
    this.respawning = true;
    try {
      proc.signal('SIGINT');
      if (!(await proc.waitExit(SIGINT_GRACE_MS))) await proc.kill();
      await turn.ended;
      await this.start();
    } finally {
      this.respawning = false;
    }
  }

  answerPermission(id: string, allow: boolean): void {
    const p = this.permissions.get(id);
    if (!p) {
      this.log.info({ id }, 'no such permission prompt (answered or withdrawn)');
      return;
    }
    this.permissions.delete(id);
    const response = allow ? { behavior: 'allow', updatedInput: p.input ?? {} } : { behavior: 'deny', message: DENY_MESSAGE };
    this.proc?.write({ type: 'control_response', response: { subtype: 'success', request_id: id, response } });
    if (!this.permissions.size && this._state === 'waiting') this.setState('busy');
  }

  async stop(): Promise<void> {
    if (this.starting) await this.starting.catch(() => {});
    const proc = this.proc;
    if (!proc?.alive) {
      this.setState('dead');
      return;
    }
    await proc.stop();
  }

  // ---- the stream -----------------------------------------------------------------------------

  private onEvent(ev: Event): void {
    switch (ev.type) {
      case 'control_response':
        return this.onControlResponse(ev);
      case 'control_request':
        return this.onControlRequest(ev);
      case 'control_cancel_request': {
        // The prompt was withdrawn (an interrupt while it waited).
        if (this.permissions.delete(String(ev.request_id)) && !this.permissions.size && this._state === 'waiting') this.setState('busy');
        return;
      }
      case 'user':
        if (ev.isReplay === true && this.turn && ev.uuid === this.turn.uuid) this.turn.replayed = true;
        return;
      case 'assistant':
        return this.onAssistant(ev);
      case 'result':
        return this.onResult(ev);
      case 'system':
        return this.onSystem(ev);
    }
  }

  private onSystem(ev: Event): void {
    if (ev.subtype === 'session_state_changed' && ev.state === 'running' && !this.turn) {
      // Claude Code started a turn of its own (a background command finished).
      this.ownTurnRunning = true;
      if (this._state === 'idle') this.setState('busy');
    } else if (ev.subtype === 'task_started' && typeof ev.task_id === 'string') {
      this.background.add(ev.task_id);
      this.opts.events.backgroundJobs?.(this.background.size);
    } else if ((ev.subtype === 'task_updated' || ev.subtype === 'task_notification') && typeof ev.task_id === 'string') {
      const status = ev.subtype === 'task_updated' ? (ev.patch as { status?: unknown } | undefined)?.status : ev.status;
      if (ev.subtype === 'task_notification' && !this.turn?.replayed) this.ownTurnRunning = true;
      if (typeof status === 'string' && !['running', 'pending'].includes(status) && this.background.delete(ev.task_id)) {
        this.opts.events.backgroundJobs?.(this.background.size);
      }
    }
  }

  private onAssistant(ev: Event): void {
    const content = (ev.message as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) return;
    for (const block of content as { type?: string; text?: unknown }[]) {
      if (block.type !== 'text' || typeof block.text !== 'string') continue;
      if (this.turn) this.turn.lastText = block.text;
      for (const line of block.text.split('\n')) if (line.trim()) this.opts.events.text?.(line.trim());
    }
  }

  private onResult(ev: Event): void {
    const turn = this.turn;
    const ours = turn !== undefined && (turn.replayed || !this.ownTurnRunning);
    this.ownTurnRunning = false;
    if (!ours) {
      this.log.debug({ isError: ev.is_error }, 'claude finished a turn of its own');
      if (!turn && this._state === 'busy') this.setState('idle');
      return;
    }
    this.turn = undefined;
    this.permissions.clear();
    const text = typeof ev.result === 'string' ? ev.result : turn.lastText;
    let r: TurnResult;
    if (ev.is_error !== true) r = { status: 'completed', text };
    else if (turn.cancelRequested || /abort/.test(String(ev.terminal_reason ?? ''))) r = { status: 'cancelled', text: turn.lastText };
    else {
      const errors = Array.isArray(ev.errors) ? (ev.errors as unknown[]).map(String).join('; ') : '';
      r = {
        status: 'failed',
        text: turn.lastText,
        error: (typeof ev.result === 'string' && ev.result) || errors || String(ev.subtype ?? 'error'),
      };
    }
    this.log.debug({ turnId: turn.id, status: r.status }, 'claude turn ended');
    this.setState('idle');
    turn.resolve(r);
  }

  private onControlRequest(ev: Event): void {
    const id = String(ev.request_id ?? '');
    const req = (ev.request ?? {}) as { subtype?: string; tool_name?: unknown; input?: unknown };
    if (req.subtype === 'can_use_tool') {
      if (!this.opts.events.permission) {
        // Nobody to ask: refuse rather than hang the turn.
        this.proc?.write({
          type: 'control_response',
          response: { subtype: 'success', request_id: id, response: { behavior: 'deny', message: DENY_MESSAGE } },
        });
        return;
      }
      this.permissions.set(id, { input: req.input });
      this.setState('waiting');
      this.opts.events.permission({ id, tool: String(req.tool_name ?? ''), input: req.input });
      return;
    }
    this.proc?.write({
      type: 'control_response',
      response: { subtype: 'error', request_id: id, error: `not supported by the shrooms bridge: ${req.subtype}` },
    });
  }

  private onControlResponse(ev: Event): void {
    const response = (ev.response ?? {}) as Event;
    const waiter = this.controls.get(String(response.request_id));
    // Claude Code also echoes our answers to its own requests: those have no waiter.
    if (!waiter) return;
    this.controls.delete(String(response.request_id));
    if (response.subtype === 'error') waiter.reject(new Error(String(response.error ?? 'control request failed')));
    else waiter.resolve(response);
  }

  private control(request: { subtype: string }, timeoutMs: number): Promise<Event> {
    const proc = this.proc;
    if (!proc?.alive) return Promise.reject(new Error('claude is not running'));
    const id = `shrooms-${++this.controlSeq}`;
    return new Promise<Event>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.controls.delete(id);
        reject(new Error(`no answer to ${request.subtype} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.controls.set(id, {
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      proc.write({ type: 'control_request', request_id: id, request });
    });
  }

  private onExit(proc: JsonlChild, exit: ChildExit): void {
    if (this.proc !== proc) return;
    this.proc = undefined;
    const why = `claude exited (${exit.signal ?? `code ${exit.code}`})${proc.stderrTail() ? `: ${proc.stderrTail(500)}` : ''}`;
    this.log.info({ code: exit.code, signal: exit.signal, respawning: this.respawning }, 'claude exited');
    for (const c of this.controls.values()) c.reject(new Error(why));
    this.controls.clear();
    this.permissions.clear();
    this.ownTurnRunning = false;
    if (this.background.size) {
      this.background.clear();
      this.opts.events.backgroundJobs?.(0);
    }
    const turn = this.turn;
    this.turn = undefined;
    if (turn?.cancelRequested) turn.resolve({ status: 'cancelled', text: turn.lastText });
    else turn?.reject(new Error(why));
    this.setState('dead');
    if (!this.respawning && this.readyProc === proc) this.opts.events.exit?.(exit.code);
  }
}

/** Whether a transcript `<id>.jsonl` exists in any project folder of Claude Code's config dir. */
async function transcriptExists(configDir: string, sessionId: string): Promise<boolean> {
  const projects = join(configDir, 'projects');
  const dirs = await readdir(projects).catch(() => [] as string[]);
  for (const d of dirs) {
    if (
      await access(join(projects, d, `${sessionId}.jsonl`)).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}
