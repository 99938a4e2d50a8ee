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
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { piCommand } from './binaries.js';
import type { JsonlChild } from './child.js';
import { CliHarness, READY_TIMEOUT_MS, type CallRequest, type Launch, type Turn } from './cli-harness.js';
import { sessionFile } from './session-file.js';
import { MODEL_ENV, modelBaseUrl, modelSetting } from './env.js';
import { PiEventSchema, type PiEvent, type PiMessage, type PiResponse } from './pi-events.js';
import type { TurnResult } from './types.js';

/** The extension we ship (the same path from src/ and from dist/). */
export const PI_EXTENSION_FILE = fileURLToPath(new URL('../../pi-extension/shrooms-tools.ts', import.meta.url));
/** The provider name of the generated models.json: pi's model is `shrooms/<SHROOMS_MODEL>`. */
export const PI_PROVIDER = 'shrooms';

/** What pi-session.json keeps: the conversation's id, whose file pi names `…_<id>.jsonl`. */
interface PiStored {
  sessionId?: string;
}

const RPC_TIMEOUT_MS = 30_000;
const DIALOGS = new Set(['select', 'confirm', 'input', 'editor']);

interface PiState {
  sessionId?: string;
  sessionFile?: string;
  isStreaming?: boolean;
  isCompacting?: boolean;
}

export class PiHarness extends CliHarness<PiEvent, PiResponse, undefined> {
  readonly kind = 'pi' as const;
  protected readonly events = PiEventSchema;
  protected readonly hardStopSignal = 'SIGTERM';
  private sessionFile?: string;

  protected async handshake(): Promise<void> {
    const state = (await this.call({ type: 'get_state' }, READY_TIMEOUT_MS)).data as PiState | undefined;
    this._sessionId = state?.sessionId;
    this.sessionFile = state?.sessionFile;
    await sessionFile<PiStored>(this.opts.stateDir, 'pi').write({ sessionId: this._sessionId });
    await this.call({ type: 'set_auto_retry', enabled: false }, RPC_TIMEOUT_MS);
  }

  protected async launch(): Promise<Launch> {
    const o = this.opts;
    await mkdir(o.stateDir, { recursive: true });
    const agentDir = o.env.PI_CODING_AGENT_DIR ?? join(o.stateDir, 'pi-agent');
    const baseUrl = modelSetting(o, MODEL_ENV.baseUrl);
    const modelId = o.model ?? modelSetting(o, MODEL_ENV.model);
    if (!o.env.PI_CODING_AGENT_DIR) {
      await mkdir(agentDir, { recursive: true });
      if (baseUrl)
        await writeFile(
          join(agentDir, 'models.json'),
          JSON.stringify(piModelsJson(baseUrl, modelSetting(o, MODEL_ENV.api), modelId ?? 'default'), null, 2),
        );
    }
    const sessionDir = join(o.stateDir, 'pi-sessions');
    await mkdir(sessionDir, { recursive: true });
    const stored = (await sessionFile<PiStored>(o.stateDir, 'pi').read())?.sessionId;
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
      ...o.baseEnv,
      PI_OFFLINE: '1',
      PI_TELEMETRY: '0',
      SHROOMS_AGENT_SESSION: `${o.machine}/${o.session}`,
      SHROOMS_MCP_URL: o.mcpUrl,
      // models.json names this variable as the key; pi needs some value even for a keyless server.
      [MODEL_ENV.apiKey]: modelSetting(o, MODEL_ENV.apiKey) ?? 'none',
      ...o.env,
      PI_CODING_AGENT_DIR: agentDir,
    };
    return { command: piCommand(env), args, env, logInfo: { resume: this.sessionFile } };
  }

  protected turnData(): undefined {
    return undefined;
  }

  protected writeTurn(turn: Turn<undefined>, text: string): void {
    this.call({ type: 'prompt', message: text }, RPC_TIMEOUT_MS).then(
      (r) => {
        if (r.success === false && this.turn === turn)
          this.finish(turn, { status: 'failed', text: '', error: `pi refused the prompt: ${String(r.error ?? 'unknown reason')}` });
      },
      (err: Error) => this.log.warn({ err, turnId: turn.id }, 'pi did not answer the prompt command'),
    );
  }

  protected writeCall(id: string, command: CallRequest, proc: JsonlChild): void {
    proc.write({ id, ...command });
  }

  /** pi ends the run (`agent_end`, `stopReason:"aborted"`) before it answers `abort`: the base waits for the turn. */
  protected interrupt(graceMs: number): void {
    this.call({ type: 'abort' }, graceMs).catch((err) => this.log.debug({ err }, 'pi did not answer abort'));
  }

  // ---- the stream -----------------------------------------------------------------------------

  protected onEvent(ev: PiEvent): void {
    switch (ev.type) {
      case 'response':
        if (ev.id !== undefined) this.answered(ev.id, { result: ev });
        return;
      case 'message_end':
        if (ev.message?.role === 'assistant') {
          const text = textOf(ev.message);
          if (text) this.said(text);
        }
        return;
      case 'agent_end':
        return void this.onAgentEnd(ev.messages ?? []);
      case 'extension_ui_request':
        if (ev.method !== undefined && DIALOGS.has(ev.method)) {
          this.log.info({ method: ev.method, title: ev.title }, 'pi extension asked a question; answering cancelled');
          this.proc?.write({ type: 'extension_ui_response', id: ev.id, cancelled: true });
        }
        return;
      case 'extension_error':
        this.log.warn({ extension: ev.extensionPath, event: ev.event, error: ev.error }, 'pi extension error');
        return;
    }
  }

  private async onAgentEnd(messages: PiMessage[]): Promise<void> {
    const turn = this.turn;
    if (!turn) return;
    // Is the run really over (no compaction retry, no retry of our own settings' making)?
    const state = await this.call({ type: 'get_state' }, RPC_TIMEOUT_MS).then(
      (r) => r.data as PiState | undefined,
      () => undefined,
    );
    if (this.turn !== turn) return;
    if (state?.isStreaming || state?.isCompacting) {
      this.log.debug({ turnId: turn.id }, 'pi goes on after agent_end; waiting for the next one');
      return;
    }
    this.finish(turn, outcome(turn, messages));
  }
}

/** `models.json` with one provider for the configured endpoint. */
export function piModelsJson(baseUrl: string, api: string | undefined, modelId: string): object {
  const kind = api ?? 'openai-completions';
  return {
    providers: {
      [PI_PROVIDER]: {
        baseUrl: modelBaseUrl(baseUrl, kind === 'anthropic-messages' ? 'anthropic' : 'openai'),
        api: kind,
        apiKey: MODEL_ENV.apiKey,
        // OpenAI-compatible servers (vLLM, llama.cpp, ours) rarely know the "developer" role.
        ...(kind === 'openai-completions' ? { compat: { supportsDeveloperRole: false, supportsReasoningEffort: false } } : {}),
        models: [{ id: modelId, contextWindow: 128_000, maxTokens: 8_192 }],
      },
    },
  };
}

function textOf(m: PiMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (!Array.isArray(m.content)) return '';
  return (m.content as { type?: string; text?: unknown }[])
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

function outcome(turn: Turn<undefined>, messages: PiMessage[]): TurnResult {
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
