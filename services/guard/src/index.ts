/** @shrooms/guard — the admission service: libs/admission answered over NATS (`shrooms.guard.*`). */
export { buildGuard, GUARD_VERSION, type BuildGuardOptions, type Guard } from './guard.js';
export { runGuard } from './run.js';
export { GuardConfigSchema, loadGuardConfig, type GuardConfig } from './config.js';
