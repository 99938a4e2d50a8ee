/**
 * The ACP agents the bridge knows by name (`--agent gemini|opencode|codex`), and any other by its command
 * line (`--agent-command "…"`). A preset knows what the protocol leaves to each agent: where its
 * executable is, how the model endpoint and key reach it, how the system-prompt note gets in, and
 * which of its permission requests are for our own bookkeeping tools (answered without asking).
 * Checked against Gemini CLI 0.61.0, OpenCode 1.18.33 and codex-acp 0.16.0 (their MCP tool timeouts: read in
 * their code, below).
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { AcpToolCall } from './acp-events.js';
import { codexAcpCommand, geminiCommand, opencodeCommand, type Command } from './binaries.js';
import { MODEL_ENV, modelBaseUrl, modelSetting } from './env.js';
import type { HarnessOptions } from './types.js';

/** The MCP server's name in `session/new`; agents prefix its tools with it. */
export const ACP_MCP_SERVER = 'shrooms';
/** Our tools that make work elsewhere: these ask the owner unless the session auto-approves. */
export const ASKING_TOOLS = ['ask_agent', 'schedule_task', 'cancel_schedule'];

export interface AcpLaunch {
  command: Command;
  args: string[];
  env: Record<string, string>;
  /** The note is in the agent's own configuration; otherwise it goes ahead of a new conversation's first prompt. */
  noteInConfig: boolean;
}

export interface AcpAgent {
  /** Stored with the session: a different agent starts a new conversation. */
  readonly name: string;
  launch(o: HarnessOptions): Promise<AcpLaunch>;
  /**
   * The tool of ours a permission request is for, when the agent says so reliably; `announced` is
   * the agent's own `tool_call` update of the same id, if there was one.
   */
  shroomsTool?(call: AcpToolCall, announced?: AcpToolCall): string | undefined;
  /**
   * How long the agent lets one MCP tool call run before it ends it itself, s, when that is known
   * and shorter than ask_agent's longest wait: the session's tools then answer a minute before.
   */
  readonly toolTimeoutSeconds?: number;
}

export const ACP_PRESETS = ['gemini', 'opencode', 'codex'] as const;
export type AcpPreset = (typeof ACP_PRESETS)[number];

function baseEnv(o: HarnessOptions): Record<string, string> {
  return { ...o.baseEnv, SHROOMS_AGENT_SESSION: `${o.machine}/${o.session}` };
}

/**
 * Gemini CLI, `gemini --experimental-acp`. Its home is ours (`GEMINI_CLI_HOME` =
 * `stateDir/gemini-home`, unless the harness env sets it): the note is its global
 * `.gemini/GEMINI.md`, which Gemini CLI puts in every conversation's context, and its chats live
 * there. It runs as one process (`GEMINI_CLI_NO_RELAUNCH`: no child with a bigger heap, so a signal
 * reaches the agent itself). The model endpoint: `SHROOMS_MODEL_BASE_URL` → `GOOGLE_GEMINI_BASE_URL`
 * (the host, no `/v1beta`), `SHROOMS_MODEL_API_KEY` → `GEMINI_API_KEY`. Gemini CLI refuses MCP
 * servers in a folder it does not trust; the bridge's folder is the owner's own project, so it is
 * trusted (`GEMINI_CLI_TRUST_WORKSPACE`). It names MCP tools `mcp_<server>_<tool>` and starts a
 * call's id with the tool's name (`<name>__<id>` or `<name>-<time>-<n>`), which is what tells our
 * tools apart here — not the title, which for a shell command is the command.
 */
export const gemini: AcpAgent = {
  name: 'gemini',
  // Gemini CLI ends an MCP call after its server's `timeout`, 10 minutes unless set; progress
  // notifications do not extend it (its MCP client passes no resetTimeoutOnProgress).
  toolTimeoutSeconds: 600,
  async launch(o) {
    const home = o.env.GEMINI_CLI_HOME ?? join(o.stateDir, 'gemini-home');
    const own = o.env.GEMINI_CLI_HOME === undefined;
    if (own) {
      await mkdir(join(home, '.gemini'), { recursive: true });
      await writeFile(join(home, '.gemini', 'GEMINI.md'), o.systemNote);
      await writeFile(join(home, '.gemini', 'settings.json'), JSON.stringify({ privacy: { usageStatisticsEnabled: false } }, null, 2));
    }
    const model = o.model ?? modelSetting(o, MODEL_ENV.model);
    const baseUrl = modelSetting(o, MODEL_ENV.baseUrl);
    const apiKey = modelSetting(o, MODEL_ENV.apiKey);
    const env = {
      ...baseEnv(o),
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      GEMINI_CLI_NO_RELAUNCH: 'true',
      ...(baseUrl ? { GOOGLE_GEMINI_BASE_URL: baseUrl } : {}),
      ...(apiKey ? { GEMINI_API_KEY: apiKey } : {}),
      ...o.env,
      GEMINI_CLI_HOME: home,
    };
    return { command: geminiCommand(env), args: ['--experimental-acp', ...(model ? ['--model', model] : [])], env, noteInConfig: own };
  },
  shroomsTool(call) {
    const name = /^(.+?)(?:__|-\d+-\d+$)/.exec(call.toolCallId ?? '')?.[1];
    const prefix = `mcp_${ACP_MCP_SERVER}_`;
    return name?.startsWith(prefix) ? name.slice(prefix.length) : undefined;
  },
};

/**
 * OpenCode, `opencode acp`. Its configuration is a file of ours (`OPENCODE_CONFIG`): the note as
 * `instructions`, `ask` for our tools that make work elsewhere (OpenCode runs every other tool
 * without asking unless its own config says otherwise), and with `SHROOMS_MODEL_BASE_URL` an
 * OpenAI-compatible provider `shrooms` (base URL with `/v1`; the key read from
 * `SHROOMS_MODEL_API_KEY`) whose model `SHROOMS_MODEL` is the default. Its HOME is ours too
 * (`stateDir/opencode-home`: sessions, its database), so a conversation survives a restart.
 */
export const opencode: AcpAgent = {
  name: 'opencode',
  // No toolTimeoutSeconds: OpenCode calls MCP tools with the SDK's 60 s request timeout but
  // `resetTimeoutOnProgress` and no total cap, and a waiting ask_agent sends progress every
  // SHROOMS_ASK_PROGRESS_MS (15 s), so a wait runs its whole length.
  async launch(o) {
    const home = o.env.HOME ?? join(o.stateDir, 'opencode-home');
    await mkdir(home, { recursive: true });
    const noteFile = join(o.stateDir, 'opencode-note.md');
    await writeFile(noteFile, o.systemNote);
    const baseUrl = modelSetting(o, MODEL_ENV.baseUrl);
    const model = o.model ?? modelSetting(o, MODEL_ENV.model) ?? 'default';
    const config = {
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      instructions: [noteFile],
      permission: o.autoApprove ? {} : Object.fromEntries(ASKING_TOOLS.map((t) => [`${ACP_MCP_SERVER}_${t}`, 'ask'])),
      ...(baseUrl
        ? {
            provider: {
              shrooms: {
                npm: '@ai-sdk/openai-compatible',
                name: 'shrooms',
                options: { baseURL: modelBaseUrl(baseUrl, 'openai'), apiKey: `{env:${MODEL_ENV.apiKey}}` },
                models: { [model]: { name: model } },
              },
            },
            model: `shrooms/${model}`,
            small_model: `shrooms/${model}`,
          }
        : {}),
    };
    const configFile = join(o.stateDir, 'opencode.json');
    await writeFile(configFile, JSON.stringify(config, null, 2));
    const env = {
      ...baseEnv(o),
      OPENCODE_CONFIG: configFile,
      // The bridge pins the version; with our own provider the models.dev catalogue is not needed.
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      ...(baseUrl ? { OPENCODE_DISABLE_MODELS_FETCH: '1' } : {}),
      [MODEL_ENV.apiKey]: modelSetting(o, MODEL_ENV.apiKey) ?? 'none',
      ...o.env,
      HOME: home,
    };
    return { command: opencodeCommand(env), args: ['acp'], env, noteInConfig: true };
  },
};

/**
 * Codex through Zed's adapter, `codex-acp` (a native executable). Its home is ours (`CODEX_HOME` =
 * `stateDir/codex-home`, unless the harness env sets it): the note is its global `AGENTS.md`, and
 * with `SHROOMS_MODEL_BASE_URL` its `config.toml` names a provider `shrooms` (the OpenAI Responses
 * API at that base URL, with `/v1`; the key read from `SHROOMS_MODEL_API_KEY`) and `SHROOMS_MODEL`.
 * Codex asks before every MCP call; it announces a call as a `tool_call` whose `rawInput` names
 * server and tool, and its approval request says `codex_approval_kind: "mcp_tool_call"` for that
 * server — both of Codex's own making, which is what tells our tools apart.
 */
export const codex: AcpAgent = {
  name: 'codex',
  // codex-acp gives the MCP servers of `session/new` no `tool_timeout_sec`, and Codex then ends a
  // call after its DEFAULT_TOOL_TIMEOUT, 300 s (codex-rs codex-mcp rmcp_client.rs, the build
  // codex-acp 0.16.0 bundles); a hard timeout, progress does not extend it.
  toolTimeoutSeconds: 300,
  async launch(o) {
    const home = o.env.CODEX_HOME ?? join(o.stateDir, 'codex-home');
    const own = o.env.CODEX_HOME === undefined;
    const baseUrl = modelSetting(o, MODEL_ENV.baseUrl);
    const model = o.model ?? modelSetting(o, MODEL_ENV.model);
    if (own) {
      await mkdir(home, { recursive: true });
      await writeFile(join(home, 'AGENTS.md'), o.systemNote);
      const toml = (v: string) => JSON.stringify(v);
      const lines = [
        ...(model ? [`model = ${toml(model)}`] : []),
        ...(baseUrl
          ? [
              'model_provider = "shrooms"',
              '[model_providers.shrooms]',
              'name = "shrooms"',
              `base_url = ${toml(modelBaseUrl(baseUrl, 'openai'))}`,
              'wire_api = "responses"',
              `env_key = ${toml(MODEL_ENV.apiKey)}`,
            ]
          : []),
      ];
      await writeFile(join(home, 'config.toml'), `${lines.join('\n')}\n`);
    }
    const env = {
      ...baseEnv(o),
      ...(baseUrl ? { [MODEL_ENV.apiKey]: modelSetting(o, MODEL_ENV.apiKey) ?? 'none' } : {}),
      ...o.env,
      CODEX_HOME: home,
    };
    return { command: codexAcpCommand(env), args: [], env, noteInConfig: own };
  },
  shroomsTool(call, announced) {
    const req = call.rawInput as { server_name?: unknown; request?: { _meta?: { codex_approval_kind?: unknown } } } | undefined;
    const said = announced?.rawInput as { server?: unknown; tool?: unknown } | undefined;
    if (req?.server_name !== ACP_MCP_SERVER || req.request?._meta?.codex_approval_kind !== 'mcp_tool_call') return undefined;
    return said?.server === ACP_MCP_SERVER && typeof said.tool === 'string' ? said.tool : undefined;
  },
};

/** Any other agent: the command line as given, our environment, the note ahead of the first prompt. */
export function customAgent(commandLine: string): AcpAgent {
  const [command, ...args] = splitCommandLine(commandLine);
  if (!command) throw new Error('--agent-command is empty');
  return {
    // Named in logs and the session file by its program and a digest of the line, not the line
    // itself, which may carry a key (`env API_KEY=… agent`); a changed line is still a changed agent.
    name: `command:${basename(command)}#${createHash('sha256').update(commandLine).digest('hex').slice(0, 8)}`,
    async launch(o) {
      return { command: { command, args }, args: [], env: { ...baseEnv(o), ...o.env }, noteInConfig: false };
    },
  };
}

export function acpAgent(choice: { agent?: string; agentCommand?: string }): AcpAgent {
  if (choice.agentCommand) return customAgent(choice.agentCommand);
  if (choice.agent === 'gemini') return gemini;
  if (choice.agent === 'opencode') return opencode;
  if (choice.agent === 'codex') return codex;
  throw new Error(`the acp harness needs --agent ${ACP_PRESETS.join('|')} or --agent-command "…" (got ${choice.agent ?? 'neither'})`);
}

/** Words of a command line: whitespace separates, single or double quotes group, backslash escapes. */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} in --agent-command`);
  if (inWord) out.push(word);
  return out;
}

/** Our tools that run without asking (the same set as for Claude Code). */
export { READ_ONLY_TOOLS } from './read-only-tools.js';

/**
 * The longest wait the session's tools may take in one call under this ACP agent (a minute before
 * its own tool timeout), or undefined when it sets none that ours would meet.
 */
export function toolWaitSeconds(choice: { agent?: string; agentCommand?: string }): number | undefined {
  const timeout = choice.agentCommand ? undefined : acpAgent(choice).toolTimeoutSeconds;
  return timeout === undefined ? undefined : Math.max(1, timeout - 60);
}
