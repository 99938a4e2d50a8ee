/**
 * @shrooms/admission — whether a new task may start: chain rules, allow-lists, the loop guard and
 * agent budgets over shared JetStream KV windows. The guard service serves it over NATS; a gateway
 * may run it in its own process (GATEWAY_GUARD=local).
 */
export { openAdmission, type Admission, type OpenAdmissionOptions } from './open.js';
export { AdmissionConfigSchema, type AdmissionConfig } from './config.js';
export type { Admit, AdmitLimits } from './admit/admit.js';
export type { Control } from './control/control.js';
export type { SignalReader } from './hold/signals.js';
export { checkChain } from './chain/chain.js';
export type { EffectiveRule } from './policy/schema.js';
export { parsePolicy } from './policy/file.js';
