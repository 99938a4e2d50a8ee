/**
 * The pi adapter: one long-lived `pi --mode rpc` per session. Facts checked against the real 0.73.1:
 *
 * - Config: `PI_CODING_AGENT_DIR` = `stateDir/pi-agent` (unless `env.PI_CODING_AGENT_DIR` is given),
 *   with a generated `models.json` whose provider `shrooms` points at `SHROOMS_MODEL_BASE_URL`
 *   (see env.ts). The key stays out of the file: `apiKey` names the variable pi reads it from.
 * - Session: `--session-dir stateDir/pi-sessions`. pi writes `<time>_<id>.jsonl` only after the first
 *   answer, and `--session` of an unknown id exits 1 — so we resume (`--session <file>`) only when the
 *   file of the stored id exists, and start a new session otherwise.
 * - Ready: `get_state` answered; then `set_auto_retry false` (otherwise an `agent_end` with an error is
 *   followed by retries, each a new run), so one `prompt` is one run.
 * - A turn: `prompt` → `agent_start` … `agent_end` (whose messages are the run's). A run can go on
 *   after `agent_end` (compaction that retries): `get_state` after it tells whether it is really over.
 * - Cancel: `abort` — pi ends the run (`agent_end`, `stopReason:"aborted"`) before it answers the
 *   command, so we wait for the turn, not the response. Fallback: SIGTERM/SIGKILL and a respawn.
 * - Extension dialogs (`extension_ui_request` select/confirm/input/editor) block pi until answered:
 *   we answer every one at once with `cancelled:true`; nobody sits at a pi TUI here.
 * - Our tools: the extension `pi-extension/shrooms-tools.ts`, which reads `SHROOMS_MCP_URL` and
 *   registers the MCP server's tools as `mcp__shrooms__<tool>`, like Claude Code names them.
 * - No permission prompts (pi runs every tool) and no background commands (its bash tool waits for
 *   the command): `waiting` and `backgroundJobs` never happen here.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { piCommand } from './binaries.js';
import { ProcessHarness } from './process-harness.js';
import { JsonlChild, within, type ChildExit } from './child.js';
import { inheritedEnv, MODEL_ENV, modelSetting } from './env.js';
import type { Harness, HarnessOptions, HarnessState, TurnResult } from './types.js';

/** The extension we ship (the same path from src/ and from dist/). */
export const PI_EXTENSION_FILE = fileURLToPath(new URL('../../pi-extension/shrooms-tools.ts', import.meta.url));
/** The provider name of the generated models.json: pi's model is `shrooms/<SHROOMS_MODEL>`. */
export const PI_PROVIDER = 'shrooms';

const READY_TIMEOUT_MS = 60_000;
const RPC_TIMEOUT_MS = 30_000;
const DEFAULT_CANCEL_GRACE_MS = 10_000;
const DIALOGS = new Set(['select', 'confirm', 'input', 'editor']);

interface Turn {
  id: string;
  cancelRequested: boolean;
  lastText: string;
  resolve(r: TurnResult): void;
  reject(e: Error): void;
  ended: Promise<void>;
}

type Event = Record<string, unknown> & { type?: string };
type Message = { role?: string; content?: unknown; stopReason?: string; errorMessage?: string };

export class PiHarness extends ProcessHarness implements Harness {
  readonly kind = 'pi' as const;
  private readyProc?: JsonlChild;
  private turn?: Turn;
  private readonly rpcs = new Map<string, { resolve(r: Event): void; reject(e: Error): void }>();
  private rpcSeq = 0;
  private respawning = false;
  private sessionFile?: string;

  protected async spawnAndWait(): Promise<void> {
    this.setState('starting');
    const { args, env } = await this.prepare();
    const cmd = piCommand(env);
    this.log.info({ command: cmd.command, resume: this.sessionFile, cwd: this.opts.cwd }, 'starting pi');
    const proc = new JsonlChild(cmd, args, {
      cwd: this.opts.cwd,
      env,
      log: this.log,
      onValue: (v) => this.onEvent(v as Event),
      onExit: (e) => this.onExit(proc, e),
    });
    this.proc = proc;
    try {
      const state = (await this.rpc({ type: 'get_state' }, READY_TIMEOUT_MS)).data as
        { sessionId?: string; sessionFile?: string } | undefined;
      this._sessionId = state?.sessionId;
      this.sessionFile = state?.sessionFile;
      await writeFile(join(this.opts.stateDir, 'pi-session.json'), JSON.stringify({ sessionId: this._sessionId }));
      await this.rpc({ type: 'set_auto_retry', enabled: false }, RPC_TIMEOUT_MS);
    } catch (err) {
      await proc.kill();
      throw new Error(`pi did not get ready: ${(err as Error).message}${proc.stderrTail() ? `; stderr: ${proc.stderrTail()}` : ''}`);
    }
    this.readyProc = proc;
    this.setState(this.turn ? 'busy' : 'idle');
  }

  private async prepare(): Promise<{ args: string[]; env: Record<string, string> }> {
    const o = this.opts;
    await mkdir(o.stateDir, { recursive: true });
    const agentDir = o.env.PI_CODING_AGENT_DIR ?? join(o.stateDir, 'pi-agent');
    const baseUrl = modelSetting(o.env, MODEL_ENV.baseUrl);
    const modelId = o.model ?? modelSetting(o.env, MODEL_ENV.model);
    if (!o.env.PI_CODING_AGENT_DIR) {
      await mkdir(agentDir, { recursive: true });
      if (baseUrl)
        await writeFile(
          join(agentDir, 'models.json'),
          JSON.stringify(piModelsJson(baseUrl, modelSetting(o.env, MODEL_ENV.api), modelId ?? 'default'), null, 2),
        );
    }
    const sessionDir = join(o.stateDir, 'pi-sessions');
    await mkdir(sessionDir, { recursive: true });
    const stored = await readFile(join(o.stateDir, 'pi-session.json'), 'utf8').then(
      (t) => (JSON.parse(t) as { sessionId?: string }).sessionId,
      () => undefined,
    );
    const files = stored ? (await readdir(sessionDir)).filter((f) => f.endsWith(`_${stored}.jsonl`)) : [];
    this.sessionFile = files.length ? join(sessionDir, files.sort().at(-1)!) : undefined;
    const noteFile = join(o.stateDir, 'pi-system-note.md');
    await writeFile(noteFile, o.systemNote);

    const model = baseUrl && !o.env.PI_CODING_AGENT_DIR ? `${PI_PROVIDER}/${modelId ?? 'default'}` : modelId;
    const args = [
      '--mode',
      'rpc',
      ...(model ? ['--model', model] : []),
      '--session-dir',
      sessionDir,
      ...(this.sessionFile ? ['--session', this.sessionFile] : []),
      '-e',
      PI_EXTENSION_FILE,
      // pi reads a file's contents when the value is a path.
      '--append-system-prompt',
      noteFile,
      '--no-themes',
    ];
    const env: Record<string, string> = {
      ...inheritedEnv(),
      PI_OFFLINE: '1',
      PI_TELEMETRY: '0',
      SHROOMS_AGENT_SESSION: `${o.machine}/${o.session}`,
      SHROOMS_MCP_URL: o.mcpUrl,
      // models.json names this variable as the key; pi needs some value even for a keyless server.
      [MODEL_ENV.apiKey]: modelSetting(o.env, MODEL_ENV.apiKey) ?? 'none',
      ...o.env,
      PI_CODING_AGENT_DIR: agentDir,
    };
    return { args, env };
  }

  async send(turnId: string, text: string): Promise<TurnResult> {
    if (this.starting) await this.starting;
    if (!this.proc?.alive) throw new Error('pi is not running');
    if (this.turn) throw new Error(`pi is already running turn ${this.turn.id}`);
    let resolve!: (r: TurnResult) => void;
    let reject!: (e: Error) => void;
    const result = new Promise<TurnResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const turn: Turn = {
      id: turnId,
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
    this.setState('busy');
    this.log.debug({ turnId }, 'pi turn sent');
    this.rpc({ type: 'prompt', message: text }, RPC_TIMEOUT_MS).then(
      (r) => {
        if (r.success === false && this.turn === turn)
          this.finish(turn, { status: 'failed', text: '', error: `pi refused the prompt: ${String(r.error ?? 'unknown reason')}` });
      },
      (err: Error) => this.log.warn({ err, turnId }, 'pi did not answer the prompt command'),
    );
    return result;
  }

  async cancel(): Promise<void> {
    const turn = this.turn;
    const proc = this.proc;
    if (!turn || !proc) return;
    turn.cancelRequested = true;
    const grace = this.opts.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS;
    // The run ends before pi answers `abort`: the turn's end is what we wait for.
    this.rpc({ type: 'abort' }, grace).catch((err) => this.log.debug({ err }, 'pi did not answer abort'));
    if (await within(turn.ended, grace)) return;
    this.log.warn({ turnId: turn.id }, 'pi did not end the run after abort; restarting it');
    this.respawning = true;
    try {
      proc.signal('SIGTERM');
      if (!(await proc.waitExit(2_000))) await proc.kill();
      await turn.ended;
      await this.start();
    } finally {
      this.respawning = false;
    }
  }

  answerPermission(id: string): void {
    this.log.info({ id }, 'pi asks no permissions; nothing to answer');
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
      case 'response': {
        const waiter = this.rpcs.get(String(ev.id));
        if (waiter) {
          this.rpcs.delete(String(ev.id));
          waiter.resolve(ev);
        }
        return;
      }
      case 'message_end':
        return this.onMessageEnd(ev.message as Message | undefined);
      case 'agent_end':
        return void this.onAgentEnd(ev);
      case 'extension_ui_request':
        if (DIALOGS.has(String(ev.method))) {
          this.log.info({ method: ev.method, title: ev.title }, 'pi extension asked a question; answering cancelled');
          this.proc?.write({ type: 'extension_ui_response', id: ev.id, cancelled: true });
        }
        return;
      case 'extension_error':
        this.log.warn({ extension: ev.extensionPath, event: ev.event, error: ev.error }, 'pi extension error');
        return;
    }
  }

  private onMessageEnd(m: Message | undefined): void {
    if (m?.role !== 'assistant') return;
    const text = textOf(m);
    if (!text) return;
    if (this.turn) this.turn.lastText = text;
    for (const line of text.split('\n')) if (line.trim()) this.opts.events.text?.(line.trim());
  }

  private async onAgentEnd(ev: Event): Promise<void> {
    const turn = this.turn;
    if (!turn) return;
    // Is the run really over (no compaction retry, no retry of our own settings' making)?
    const state = await this.rpc({ type: 'get_state' }, RPC_TIMEOUT_MS).then(
      (r) => r.data as { isStreaming?: boolean; isCompacting?: boolean } | undefined,
      () => undefined,
    );
    if (this.turn !== turn) return;
    if (state?.isStreaming || state?.isCompacting) {
      this.log.debug({ turnId: turn.id }, 'pi goes on after agent_end; waiting for the next one');
      return;
    }
    this.finish(turn, outcome(turn, (ev.messages as Message[] | undefined) ?? []));
  }

  private finish(turn: Turn, r: TurnResult): void {
    if (this.turn !== turn) return;
    this.turn = undefined;
    this.log.debug({ turnId: turn.id, status: r.status }, 'pi turn ended');
    this.setState('idle');
    turn.resolve(r);
  }

  private rpc(command: Event, timeoutMs: number): Promise<Event> {
    const proc = this.proc;
    if (!proc?.alive) return Promise.reject(new Error('pi is not running'));
    const id = `shrooms-${++this.rpcSeq}`;
    return new Promise<Event>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.rpcs.delete(id);
        reject(new Error(`no answer to ${String(command.type)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.rpcs.set(id, {
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      proc.write({ id, ...command });
    });
  }

  private onExit(proc: JsonlChild, exit: ChildExit): void {
    if (this.proc !== proc) return;
    this.proc = undefined;
    const why = `pi exited (${exit.signal ?? `code ${exit.code}`})${proc.stderrTail() ? `: ${proc.stderrTail(500)}` : ''}`;
    this.log.info({ code: exit.code, signal: exit.signal, respawning: this.respawning }, 'pi exited');
    for (const r of this.rpcs.values()) r.reject(new Error(why));
    this.rpcs.clear();
    const turn = this.turn;
    this.turn = undefined;
    if (turn?.cancelRequested) turn.resolve({ status: 'cancelled', text: turn.lastText });
    else turn?.reject(new Error(why));
    this.setState('dead');
    if (!this.respawning && this.readyProc === proc) this.opts.events.exit?.(exit.code);
  }
}

/** `models.json` with one provider for the configured endpoint. */
export function piModelsJson(baseUrl: string, api: string | undefined, modelId: string): object {
  const kind = api ?? 'openai-completions';
  return {
    providers: {
      [PI_PROVIDER]: {
        baseUrl,
        api: kind,
        apiKey: MODEL_ENV.apiKey,
        // OpenAI-compatible servers (vLLM, llama.cpp, ours) rarely know the "developer" role.
        ...(kind === 'openai-completions' ? { compat: { supportsDeveloperRole: false, supportsReasoningEffort: false } } : {}),
        models: [{ id: modelId, contextWindow: 128_000, maxTokens: 8_192 }],
      },
    },
  };
}

function textOf(m: Message): string {
  if (typeof m.content === 'string') return m.content;
  if (!Array.isArray(m.content)) return '';
  return (m.content as { type?: string; text?: unknown }[])
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

function outcome(turn: Turn, messages: Message[]): TurnResult {
  const last = [...messages].reverse().find((m) => m.role === 'assistant');
  const text = last ? textOf(last) : '';
  switch (last?.stopReason) {
    case 'stop':
    case 'length':
      return { status: 'completed', text };
    case 'aborted':
      return { status: 'cancelled', text };
    case 'error':
      return { status: 'failed', text, error: last.errorMessage ?? 'the model call failed' };
    default:
      return turn.cancelRequested
        ? { status: 'cancelled', text }
        : { status: 'failed', text, error: `the run ended without an answer (${last?.stopReason ?? 'no message'})` };
  }
}
