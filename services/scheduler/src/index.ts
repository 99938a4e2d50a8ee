/**
 * @shrooms/scheduler — tasks at a time, once or repeating. The package's one front door. Its wire
 * contract (schedules, rules, occurrence names) lives in @shrooms/protocol.
 */
export { compileRule, firstOccurrence, nextOccurrence, occurrences, RuleError, type CompiledRule } from './rules/occurrences.js';
export { MISSED_POLICIES, type MissedPolicy } from './rules/missed.js';
export { SchedulerConfigSchema, type SchedulerConfig } from './config.js';
export { buildScheduler, type Scheduler, type SchedulerDeps } from './app.js';
export { runScheduler } from './main.js';
