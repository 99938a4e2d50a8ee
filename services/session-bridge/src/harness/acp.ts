/**
 * The ACP adapter: any agent that speaks the Agent Client Protocol over stdio (JSON-RPC 2.0, one
 * message a line), one long-lived process per session, on the same base as Claude Code and pi.
 * What each agent needs besides the protocol is in `acp-agents.ts`. Checked against Gemini CLI 0.61.0
 * and OpenCode 1.18.33:
 *
 * - Ready: `initialize` (we offer no file system and no terminal: the agent uses its own tools),
 *   then `session/load` of the stored session when the agent offers it, else `session/new`. Our MCP
 *   server goes in both as `{type:"http"}` when the agent takes HTTP (`mcpCapabilities.http`), else
 *   as a stdio server, `mcp-relay/relay.mjs`, which relays to the same HTTP server (every ACP agent
 *   must take stdio; `acp.mcp` forces one or the other). The
 *   session id is kept in `stateDir/acp-session.json` with the agent and the cwd; a different agent
 *   or folder starts a new conversation. A load that fails (or an agent that cannot load) also
 *   starts a new conversation, the first prompt in it says so, and so does the task delivered
 *   again (`conversationLost`).
 * - A turn: one `session/prompt`, ended by its answer (`stopReason`); the text is the agent's
 *   `agent_message_chunk` updates, a message ending at a tool call or the end of the turn. Updates
 *   that replay history during `session/load` belong to no turn and are not read.
 * - Cancel: the `session/cancel` notification; the agent answers the prompt with `cancelled`. A
 *   permission request still open is answered `cancelled`, as the protocol asks. If the turn does
 *   not end within `cancelGraceMs`: SIGTERM, SIGKILL, and a respawn that loads the session.
 * - Permissions: `session/request_permission` is relayed (`events.permission`, state `waiting`)
 *   and answered with the agent's own allow-once or reject-once option. Our bookkeeping tools are
 *   allowed without asking when the agent names them reliably (see the preset); with `autoApprove`
 *   everything is.
 * - The agent's own requests for files or a terminal are refused (we did not offer them).
 *
 * Over 300 lines: a quarter is this note, and the handshake (initialize, load or new, the note of a
 * lost conversation) reads best whole; the messages' types are in acp-events.ts, the agents' own
 * needs in acp-agents.ts.
 */
import { fileURLToPath } from 'node:url';
import { AGENT_METHODS, CLIENT_METHODS, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { acpAgent, ACP_MCP_SERVER, READ_ONLY_TOOLS, type AcpAgent } from './acp-agents.js';
import {
  AcpMessageSchema,
  InitializeResultSchema,
  NewSessionResultSchema,
  PermissionParamsSchema,
  PromptResultSchema,
  SessionUpdateParamsSchema,
  AcpToolCallSchema,
  type AcpMessage,
  type AcpPermissionOption,
  type AcpToolCall,
} from './acp-events.js';
import type { JsonlChild } from './child.js';
import { CliHarness, READY_TIMEOUT_MS, type CallRequest, type Launch, type Turn } from './cli-harness.js';
import { OpenPrompts } from './prompts.js';
import { sessionFile } from './session-file.js';
import type { HarnessOptions, HarnessState, TurnResult } from './types.js';

/** The stdio relay to the bridge's MCP server, for agents without HTTP MCP (the same path from src/ and dist/). */
export const MCP_RELAY_FILE = fileURLToPath(new URL('../../mcp-relay/relay.mjs', import.meta.url));
const METHOD_NOT_FOUND = -32601;

/** Our request of the turn (`session/prompt`), by its JSON-RPC id, and the message being streamed. */
interface AcpTurn {
  rpcId: string;
  message: string;
}

interface StoredSession {
  sessionId: string;
  agent: string;
  cwd: string;
}

interface OpenPermission {
  rpcId: string | number;
  options: AcpPermissionOption[];
}

export class AcpHarness extends CliHarness<AcpMessage, unknown, AcpTurn> {
  readonly kind = 'acp' as const;
  protected readonly events = AcpMessageSchema;
  protected readonly hardStopSignal = 'SIGTERM';
  readonly agent: AcpAgent;
  /** The agent's name and version from `initialize`. */
  agentInfo?: { name?: string; version?: string };
  /** Whether the last start continued the stored conversation. */
  resumed = false;
  conversationLost?: string;
  private noteInConfig = false;
  /** Said ahead of the next prompt: the note (a new conversation), that the earlier one is gone. */
  private preamble: string[] = [];
  private readonly permissions = new OpenPrompts<OpenPermission>({ get: () => this._state, set: (s) => this.setState(s) }, () => this.log);
  /** The agent's `tool_call` announcements of this turn, by id (some presets read them). */
  private readonly announced = new Map<string, AcpToolCall>();
  private turnSeq = 0;

  constructor(opts: HarnessOptions) {
    super(opts);
    this.agent = acpAgent(opts.acp ?? {});
  }

  protected async launch(): Promise<Launch> {
    const l = await this.agent.launch(this.opts);
    this.noteInConfig = l.noteInConfig;
    return { command: l.command, args: l.args, env: l.env, logInfo: { agent: this.agent.name } };
  }

  protected async handshake(): Promise<void> {
    const o = this.opts;
    const init = InitializeResultSchema.parse(
      await this.call(
        {
          type: AGENT_METHODS.initialize,
          params: {
            protocolVersion: PROTOCOL_VERSION,
            clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
            clientInfo: { name: 'shrooms-bridge', version: '0.1.0' },
          },
        },
        READY_TIMEOUT_MS,
      ),
    );
    this.agentInfo = init.agentInfo;
    const caps = init.agentCapabilities;
    const mcpServers = [this.mcpServer(caps?.mcpCapabilities?.http === true)];
    const file = sessionFile<StoredSession>(o.stateDir, 'acp');
    const stored = await file.read();
    this.resumed = false;
    this.conversationLost = undefined;
    this._sessionId = undefined;
    let lost: string | undefined;
    if (stored && (stored.agent !== this.agent.name || stored.cwd !== o.cwd)) {
      this.log.warn({ was: stored, now: { agent: this.agent.name, cwd: o.cwd } }, 'the agent or folder changed; a new conversation starts');
    } else if (stored && caps?.loadSession !== true) {
      lost = `${this.agent.name} cannot resume a conversation (it does not offer session/load)`;
    } else if (stored) {
      try {
        await this.call(
          { type: AGENT_METHODS.session_load, params: { sessionId: stored.sessionId, cwd: o.cwd, mcpServers } },
          READY_TIMEOUT_MS,
        );
        this._sessionId = stored.sessionId;
        this.resumed = true;
      } catch (err) {
        lost = `${this.agent.name} could not load it: ${(err as Error).message}`;
      }
    }
    if (!this._sessionId) {
      const created = NewSessionResultSchema.parse(
        await this.call({ type: AGENT_METHODS.session_new, params: { cwd: o.cwd, mcpServers } }, READY_TIMEOUT_MS),
      );
      this._sessionId = created.sessionId;
      this.preamble = [];
      if (!this.noteInConfig) this.preamble.push(`[shrooms note for this session]\n${o.systemNote}\n[end of the note]`);
      this.conversationLost = lost;
      if (lost) {
        this.log.warn({ was: stored?.sessionId, now: this._sessionId, why: lost }, 'the earlier conversation could not be resumed');
        this.preamble.push(
          `[shrooms: this session was restarted and its earlier conversation (${stored!.sessionId}) could not be resumed — ${lost}. ` +
            'What was said before is not in this conversation.]',
        );
      }
    }
    this.log.info({ sessionId: this._sessionId, resumed: this.resumed, agent: this.agentInfo }, 'acp session ready');
    await file.write({ sessionId: this._sessionId, agent: this.agent.name, cwd: o.cwd });
  }

  /** Our MCP server as the agent takes it: over HTTP when it can (`auto`), else the stdio relay. */
  private mcpServer(httpOffered: boolean): object {
    const want = this.opts.acp?.mcp ?? 'auto';
    if (want === 'http' && !httpOffered)
      throw new Error(`${this.agent.name} does not take MCP servers over HTTP (mcpCapabilities.http); use BRIDGE_ACP_MCP=stdio`);
    if (want === 'http' || (want === 'auto' && httpOffered))
      return { type: 'http', name: ACP_MCP_SERVER, url: this.opts.mcpUrl, headers: [] };
    return {
      name: ACP_MCP_SERVER,
      command: process.execPath,
      args: [MCP_RELAY_FILE],
      env: [{ name: 'SHROOMS_MCP_URL', value: this.opts.mcpUrl }],
    };
  }

  protected turnData(): AcpTurn {
    this.announced.clear();
    return { rpcId: `turn-${++this.turnSeq}`, message: '' };
  }

  protected turnState(): HarnessState {
    return this.permissions.turnState();
  }

  protected writeTurn(turn: Turn<AcpTurn>, text: string, proc: JsonlChild): void {
    // The preamble as blocks of their own before the message, so the message stays as sent.
    const prompt = [...this.preamble, text].map((t) => ({ type: 'text', text: t }));
    this.preamble = [];
    proc.write({
      jsonrpc: '2.0',
      id: turn.data.rpcId,
      method: AGENT_METHODS.session_prompt,
      params: { sessionId: this._sessionId, prompt },
    });
  }

  protected writeCall(id: string, request: CallRequest, proc: JsonlChild): void {
    proc.write({ jsonrpc: '2.0', id, method: request.type, params: request.params });
  }

  protected interrupt(): void {
    this.proc?.write({ jsonrpc: '2.0', method: AGENT_METHODS.session_cancel, params: { sessionId: this._sessionId } });
    for (const [id, p] of this.permissions.entries()) this.respond(p.rpcId, { outcome: { outcome: 'cancelled' } }, id);
  }

  answerPermission(id: string, allow: boolean): void {
    const p = this.permissions.get(id);
    if (!p) return;
    this.respond(p.rpcId, choose(p.options, allow), id);
  }

  protected exited(): void {
    this.permissions.clear();
  }

  // ---- the stream -------------------------------------------------------------------------------

  protected onEvent(msg: AcpMessage): void {
    if (msg.kind === 'response') return this.onResponse(msg);
    if (msg.kind === 'request') {
      if (msg.method === CLIENT_METHODS.session_request_permission) return this.onPermission(msg.id, msg.params);
      this.log.info({ method: msg.method }, 'the agent asked for something we do not offer');
      this.proc?.write({
        jsonrpc: '2.0',
        id: msg.id,
        error: { code: METHOD_NOT_FOUND, message: `not offered by the shrooms bridge: ${msg.method}` },
      });
      return;
    }
    if (msg.method === CLIENT_METHODS.session_update) this.onUpdate(msg.params);
  }

  private onResponse(msg: Extract<AcpMessage, { kind: 'response' }>): void {
    const turn = this.turn;
    if (turn && String(msg.id) === turn.data.rpcId) {
      this.flush(turn);
      this.permissions.clear();
      return this.finish(turn, promptOutcome(turn, msg));
    }
    const error = msg.error ? new Error(rpcErrorText(msg.error)) : undefined;
    if (!this.answered(String(msg.id), error ? { error } : { result: msg.result }))
      this.log.debug({ id: msg.id }, 'an answer nobody waits for');
  }

  private onUpdate(params: unknown): void {
    const turn = this.turn;
    const p = SessionUpdateParamsSchema.safeParse(params);
    // Outside a turn (the history a load replays, a late chunk) nothing is read.
    if (!turn || !p.success || (p.data.sessionId !== undefined && p.data.sessionId !== this._sessionId)) return;
    const u = p.data.update;
    if (u?.sessionUpdate === 'agent_message_chunk') {
      if (u.content?.type === 'text' && u.content.text) turn.data.message += u.content.text;
    } else if (u?.sessionUpdate === 'tool_call' || u?.sessionUpdate === 'tool_call_update') {
      this.flush(turn);
      const call = AcpToolCallSchema.safeParse(u);
      if (u.sessionUpdate === 'tool_call' && call.success && call.data.toolCallId) this.announced.set(call.data.toolCallId, call.data);
    }
  }

  /** The message streamed so far is complete (a tool call follows, or the turn ended). */
  private flush(turn: Turn<AcpTurn>): void {
    if (!turn.data.message) return;
    this.said(turn.data.message);
    turn.data.message = '';
  }

  private onPermission(rpcId: string | number, params: unknown): void {
    const p = PermissionParamsSchema.safeParse(params);
    const options = p.success ? (p.data.options ?? []) : [];
    const call = p.success ? p.data.toolCall : undefined;
    const ours = call ? this.agent.shroomsTool?.(call, call.toolCallId ? this.announced.get(call.toolCallId) : undefined) : undefined;
    const id = `perm-${String(rpcId)}`;
    if (this.opts.autoApprove || (ours !== undefined && READ_ONLY_TOOLS.includes(ours))) {
      this.log.debug({ tool: ours ?? call?.title }, 'allowed without asking');
      return this.respond(rpcId, choose(options, true));
    }
    if (!this.opts.events.permission || !this.turn) return this.respond(rpcId, choose(options, false));
    this.permissions.add(id, { rpcId, options });
    const tool = ours !== undefined ? `${ACP_MCP_SERVER}/${ours}` : (call?.title ?? call?.toolCallId ?? 'a tool');
    this.opts.events.permission({ id, tool, input: call?.rawInput ?? call?.content ?? {} });
  }

  private respond(rpcId: string | number, result: object, permissionId?: string): void {
    this.proc?.write({ jsonrpc: '2.0', id: rpcId, result });
    if (permissionId) this.permissions.close(permissionId);
  }
}

/** The agent's own option for allow once (else always) or reject once (else always); none: cancelled. */
function choose(options: AcpPermissionOption[], allow: boolean): object {
  const kinds = allow ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  for (const k of kinds) {
    const o = options.find((x) => x.kind === k && x.optionId);
    if (o) return { outcome: { outcome: 'selected', optionId: o.optionId } };
  }
  return { outcome: { outcome: 'cancelled' } };
}

function rpcErrorText(e: { code?: number; message?: string; data?: unknown }): string {
  const data = e.data as { details?: unknown; message?: unknown } | undefined;
  const detail = typeof data?.details === 'string' ? data.details : typeof data?.message === 'string' ? data.message : '';
  return [e.message ?? `error ${e.code ?? ''}`.trim(), detail].filter(Boolean).join(': ');
}

/** What the answer to `session/prompt` says of the turn. */
function promptOutcome(turn: Turn<AcpTurn>, msg: Extract<AcpMessage, { kind: 'response' }>): TurnResult {
  const text = turn.lastText;
  if (msg.error) return turn.cancelRequested ? { status: 'cancelled', text } : { status: 'failed', text, error: rpcErrorText(msg.error) };
  const stop = PromptResultSchema.safeParse(msg.result ?? {});
  const reason = stop.success ? stop.data.stopReason : undefined;
  if (reason === 'cancelled') return { status: 'cancelled', text };
  if (reason === 'refusal') return { status: 'failed', text, error: 'the agent refused to go on (stopReason "refusal")' };
  return { status: 'completed', text };
}
