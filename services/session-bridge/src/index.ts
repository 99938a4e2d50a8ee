export { Bridge, type BridgeDeps, type HarnessFactory } from './bridge/bridge.js';
export { BridgeConfigSchema, type BridgeConfig, harnessBaseEnv } from './config.js';
export { runBridge } from './main.js';
export { systemNote, deliveryText, answerText, taskHeader } from './prompt.js';
export {
  EchoHarness,
  type Harness,
  type HarnessEvents,
  harnessFactory,
  type HarnessKind,
  type HarnessOptions,
  type HarnessState,
  type HarnessTools,
  type PermissionRequest,
  type TurnResult,
} from './harness/index.js';
export {
  buildMcpServer,
  createMcpServer,
  createMcpStdioServer,
  DEFAULT_PROGRESS_MS,
  MAX_WAIT_SECONDS,
  MCP_PATH,
  MCP_SERVER_NAME,
  MCP_SERVER_VERSION,
  MCP_URL_ENV,
  type McpHttpServer,
  type McpHttpServerOptions,
  type McpStdioServer,
  type McpToolContext,
  PI_EXTENSION_PATH,
  piExtensionFile,
  resolveContext,
  type ResolvedContext,
  sessionConfig,
  type SessionConfig,
  type SessionConfigInput,
  startMcpHttpServer,
  type WorkerActs,
} from './mcp/index.js';
