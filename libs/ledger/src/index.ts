export type { LedgerEntry, Stored } from './entry.js';
export { Ledger, type LedgerOptions } from './ledger.js';
export { refusedForGood } from './known.js';
export { SignalField, type SignalView } from './signals.js';
export { isOlderView, type Page, type PageQuery, TaskIndex, type TaskSummary } from './task-index.js';
export * as transitions from './transitions.js';
export { view as viewTask } from './transitions.js';
export { assertResend, intake, type IntakeResult, localTaskKey } from './intake.js';
export { hardenBucket, type Hardening } from './harden.js';
