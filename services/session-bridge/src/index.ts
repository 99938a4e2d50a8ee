export { Bridge, type BridgeDeps, type HarnessFactory } from './bridge/bridge.js';
export { BridgeConfigSchema, type BridgeConfig } from './config.js';
export { runBridge } from './main.js';
export { systemNote, deliveryText, answerText, taskHeader } from './prompt.js';
export * from './harness/index.js';
export * from './mcp/index.js';
