export { buildApp, type Gateway, type GatewayDeps } from './app.js';
export { GatewayConfigSchema, type GatewayConfig } from './config.js';
export { runGateway } from './main.js';
export type { Caller } from './tasks/caller.js';
export type { GuardPort } from './tasks/service.js';
export { loopbackOnly, type Identify } from './a2a/caller.js';
