/**
 * How a session is given the `shrooms` tools, in one place so the bridge and a person who starts a
 * session by hand (`shrooms-agent config`) use the same thing:
 *
 * - Claude Code: `--mcp-config <json> --strict-mcp-config --allowedTools <the read-only tools>`, the
 *   server either over HTTP (the bridge hosts it) or over stdio (`shrooms-agent mcp`, with the
 *   session's env); asking another agent or scheduling work asks the owner first.
 * - pi: our extension (`-e <file>`), which reads the server's URL from SHROOMS_MCP_URL.
 * - Both: the note for the system prompt, and the environment that names the session.
 */
import { READ_ONLY_TOOLS } from '../harness/read-only-tools.js';
import { fileURLToPath } from 'node:url';
import { MCP_SERVER_NAME } from './server.js';

/** The variable pi's extension reads the MCP server's URL from. */
export const MCP_URL_ENV = 'SHROOMS_MCP_URL';
/** Where the pi extension lives, relative to the repository root. */
export const PI_EXTENSION_PATH = 'services/session-bridge/pi-extension/shrooms-tools.ts';

/** The pi extension's absolute path (the same from src/ and from dist/). */
export function piExtensionFile(): string {
  return fileURLToPath(new URL('../../pi-extension/shrooms-tools.ts', import.meta.url));
}

export interface SessionConfigInput {
  machine: string;
  session: string;
  /** This machine's gateway. */
  gatewayUrl: string;
  /** The HTTP form's URL when one runs for the session (`http://127.0.0.1:PORT/mcp`). */
  mcpUrl?: string;
  /** How to start `shrooms-agent mcp` (stdio form): the program and its arguments before `mcp`. */
  command: { command: string; args: string[] };
  /** Absolute path of the pi extension file. */
  piExtension: string;
  /** The system-prompt note of the session. */
  systemNote?: string;
}

export interface SessionConfig {
  /** Environment of the session's process (the tools and `shrooms-agent a2a` read it). */
  env: Record<string, string>;
  claude: { mcpConfig: { mcpServers: Record<string, Record<string, unknown>> }; args: string[] };
  pi: { env: Record<string, string>; args: string[] };
  systemNote?: string;
}

export function sessionConfig(i: SessionConfigInput): SessionConfig {
  const env = { SHROOMS_MACHINE: i.machine, SHROOMS_AGENT_SESSION: i.session, SHROOMS_GATEWAY_URL: i.gatewayUrl };
  const server: Record<string, unknown> = i.mcpUrl
    ? { type: 'http', url: i.mcpUrl }
    : { type: 'stdio', command: i.command.command, args: [...i.command.args, 'mcp'], env };
  const mcpConfig = { mcpServers: { [MCP_SERVER_NAME]: server } };
  const claudeArgs = [
    '--mcp-config',
    JSON.stringify(mcpConfig),
    '--strict-mcp-config',
    '--allowedTools',
    READ_ONLY_TOOLS.map((t) => `mcp__${MCP_SERVER_NAME}__${t}`).join(','),
  ];
  if (i.systemNote) claudeArgs.push('--append-system-prompt', i.systemNote);
  const piEnv: Record<string, string> = { ...env, ...(i.mcpUrl ? { [MCP_URL_ENV]: i.mcpUrl } : {}) };
  return {
    env,
    claude: { mcpConfig, args: claudeArgs },
    pi: { env: piEnv, args: ['-e', i.piExtension] },
    ...(i.systemNote ? { systemNote: i.systemNote } : {}),
  };
}
