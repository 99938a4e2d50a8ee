/** The rule schemas live with the scheduler's contract in @shrooms/protocol. */
export {
  WEEKDAYS,
  WeekdaySchema,
  INTERVAL_UNITS,
  IntervalUnitSchema,
  MAX_COUNT,
  RepeatSchema,
  ScheduleRuleSchema as RuleSchema,
  OccurrenceSchema,
  type Weekday,
  type IntervalUnit,
  type Repeat,
  type ScheduleRule as Rule,
  type Occurrence,
} from '@shrooms/protocol';
