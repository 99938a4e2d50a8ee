/** @shrooms/scheduler — tasks at a time, once or repeating. The package's one front door. */
export {
  AgentRefSchema,
  type Awaiting,
  AwaitingSchema,
  type CancelScheduleReply,
  CancelScheduleReplySchema,
  type CancelScheduleRequest,
  CancelScheduleRequestSchema,
  type CreateScheduleReply,
  CreateScheduleReplySchema,
  type CreateScheduleRequest,
  CreateScheduleRequestSchema,
  type Delivery,
  DeliverySchema,
  type ListSchedulesReply,
  ListSchedulesReplySchema,
  type ListSchedulesRequest,
  ListSchedulesRequestSchema,
  type Occurrence,
  OccurrenceSchema,
  type Repeat,
  RepeatSchema,
  type Rule,
  RuleSchema,
  type Schedule,
  SCHEDULE_ID_RE,
  SCHEDULE_STATES,
  ScheduleIdSchema,
  ScheduleSchema,
  type ScheduleState,
  ScheduleStateSchema,
} from './wire.js';
export { parseRepeat, formatRepeat, RepeatSyntaxError } from './rules/shorthand.js';
export { compileRule, firstOccurrence, nextOccurrence, occurrences, RuleError, type CompiledRule } from './rules/occurrences.js';
export { occurrenceMessageId, occurrenceStamp, formatWallTime, scheduledByLine } from './rules/format.js';
export { WEEKDAYS, INTERVAL_UNITS, MAX_COUNT, type Weekday, type IntervalUnit } from './rules/schema.js';
export { MISSED_POLICIES, type MissedPolicy } from './rules/missed.js';
export { SchedulerConfigSchema, type SchedulerConfig } from './config.js';
export { buildScheduler, type Scheduler, type SchedulerDeps } from './app.js';
export { runScheduler } from './main.js';
