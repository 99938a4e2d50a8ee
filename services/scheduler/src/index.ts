/** @shrooms/scheduler — tasks at a time, once or repeating. The package's one front door. */
export * from './wire.js';
export { parseRepeat, formatRepeat, RepeatSyntaxError } from './rules/shorthand.js';
export { compileRule, firstOccurrence, nextOccurrence, occurrences, RuleError, type CompiledRule } from './rules/occurrences.js';
export { occurrenceMessageId, occurrenceStamp, formatWallTime, scheduledByLine } from './rules/format.js';
export { WEEKDAYS, INTERVAL_UNITS, MAX_COUNT, type Weekday, type IntervalUnit } from './rules/schema.js';
export { MISSED_POLICIES, type MissedPolicy } from './rules/missed.js';
export { SchedulerConfigSchema, type SchedulerConfig } from './config.js';
export { buildScheduler, type Scheduler, type SchedulerDeps } from './app.js';
export { runScheduler } from './main.js';
