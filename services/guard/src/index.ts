/** @shrooms/guard — admission for new tasks: loop guard, chain rules, allow-lists, budgets. */
export { buildGuard, GUARD_VERSION, type BuildGuardOptions, type Guard } from './guard.js';
export { runGuard } from './run.js';
export { GuardConfigSchema, loadGuardConfig, type GuardConfig } from './config.js';
export { checkChain } from './chain/chain.js';
export type { EffectiveRule } from './policy/schema.js';
export { parsePolicy } from './policy/file.js';
