/** The MCP server `shrooms` (spec §8): tools, transports, and how sessions are configured for it. */
export { createMcpServer, buildMcpServer, MCP_SERVER_NAME, MCP_SERVER_VERSION } from './server.js';
export { createMcpStdioServer, type McpStdioServer } from './stdio.js';
export { startMcpHttpServer, MCP_PATH, type McpHttpServer, type McpHttpServerOptions } from './http.js';
export {
  resolveContext,
  DEFAULT_PROGRESS_MS,
  MAX_WAIT_SECONDS,
  type McpToolContext,
  type ResolvedContext,
  type WorkerActs,
} from './context.js';
export { sessionConfig, piExtensionFile, MCP_URL_ENV, PI_EXTENSION_PATH, type SessionConfig, type SessionConfigInput } from './config.js';
