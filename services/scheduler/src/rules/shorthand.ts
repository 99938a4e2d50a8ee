/** The short form of a repeat lives in @shrooms/protocol (schedule-text.ts). */
export { parseRepeat, formatRepeat, RepeatSyntaxError } from '@shrooms/protocol';
