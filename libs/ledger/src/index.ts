export * from './entry.js';
export * from './ledger.js';
export * from './signals.js';
export * from './task-index.js';
export * as transitions from './transitions.js';
export { view as viewTask } from './transitions.js';
export * from './intake.js';
export * from './harden.js';
export * from './keys-now.js';
