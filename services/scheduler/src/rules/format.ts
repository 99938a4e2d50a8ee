/** How occurrences are named lives in @shrooms/protocol (schedule-text.ts). */
export { occurrenceStamp, occurrenceMessageId, formatWallTime, scheduledByLine } from '@shrooms/protocol';
