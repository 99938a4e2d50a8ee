/**
 * Turning a create request into a schedule: the time rule checked and compiled, bounds enforced,
 * the first occurrence worked out. Errors are ShroomsErrors with stable codes (INVALID_PARAMS,
 * LIMIT_EXCEEDED) for the service edge to send on.
 */
import { randomBytes } from 'node:crypto';
import {
  ShroomsError,
  parseRepeat,
  RepeatSyntaxError,
  type CreateScheduleRequest,
  type Repeat,
  type ScheduleRule as Rule,
  type Schedule,
} from '@shrooms/protocol';
import { compileRule, firstOccurrence, occurrenceAtOrAfter, RuleError, type CompiledRule } from './rules/occurrences.js';
import { parseAt } from './rules/time.js';

export interface CreateLimits {
  LIMIT_RECIPIENTS: number;
  LIMIT_TEXT_BYTES: number;
  SCHEDULER_MIN_INTERVAL_MS: number;
}

/** An `at` up to this far in the past still means "now" (clock skew, a slow client). */
export const CREATE_SLACK_MS = 60_000;

export function newScheduleId(): string {
  return randomBytes(6).toString('hex');
}

/** The rule of a request: `at` and its zone (inline `[Zone]`, `zone`, or UTC for an instant), the repeat parsed. */
export function ruleOf(req: Pick<CreateScheduleRequest, 'at' | 'zone' | 'repeat'>): { rule: Rule; compiled: CompiledRule } {
  let parsed;
  try {
    parsed = parseAt(req.at);
  } catch (e) {
    throw new ShroomsError('INVALID_PARAMS', (e as Error).message);
  }
  if (parsed.zone && req.zone && parsed.zone !== req.zone)
    throw new ShroomsError('INVALID_PARAMS', `at names zone ${parsed.zone} but zone is ${req.zone}`);
  const zone = parsed.zone ?? req.zone ?? (parsed.instantMs !== undefined ? 'UTC' : undefined);
  if (!zone)
    throw new ShroomsError('INVALID_PARAMS', `at ${req.at} is a local time: give its IANA zone (zone, or ${parsed.text}[Europe/Berlin])`);
  let repeat: Repeat | undefined;
  try {
    repeat = req.repeat === undefined ? undefined : parseRepeat(req.repeat);
  } catch (e) {
    if (e instanceof RepeatSyntaxError) throw new ShroomsError('INVALID_PARAMS', e.message);
    throw e;
  }
  const rule: Rule = { at: parsed.text, zone, ...(repeat ? { repeat } : {}) };
  try {
    return { rule, compiled: compileRule(rule) };
  } catch (e) {
    if (e instanceof RuleError) throw new ShroomsError('INVALID_PARAMS', e.message);
    throw e;
  }
}

export function buildSchedule(req: CreateScheduleRequest, limits: CreateLimits, now: number, id = req.id ?? newScheduleId()): Schedule {
  const recipients = [...new Set(req.recipients)];
  if (recipients.length > limits.LIMIT_RECIPIENTS) {
    throw new ShroomsError('LIMIT_EXCEEDED', `a schedule may have at most ${limits.LIMIT_RECIPIENTS} recipients`, {
      limit: 'recipients',
      max: limits.LIMIT_RECIPIENTS,
    });
  }
  const bytes = Buffer.byteLength(req.prompt, 'utf8');
  if (bytes > limits.LIMIT_TEXT_BYTES) {
    throw new ShroomsError('LIMIT_EXCEEDED', `the prompt is ${bytes} bytes; the limit is ${limits.LIMIT_TEXT_BYTES}`, {
      limit: 'textBytes',
      max: limits.LIMIT_TEXT_BYTES,
    });
  }
  const { rule, compiled } = ruleOf(req);
  const period = compiled.periodMs ?? (compiled.stepDays !== undefined ? compiled.stepDays * 86_400_000 : undefined);
  if (period !== undefined && !compiled.weekdays && period < limits.SCHEDULER_MIN_INTERVAL_MS) {
    throw new ShroomsError('LIMIT_EXCEEDED', `repeats must be at least ${limits.SCHEDULER_MIN_INTERVAL_MS} ms apart`, {
      limit: 'minIntervalMs',
      max: limits.SCHEDULER_MIN_INTERVAL_MS,
    });
  }
  const first = firstOccurrence(compiled);
  // Occurrences before now (minus a little slack) are not fired at creation: a repeat starts with
  // the first one from now on; a one-shot in the past is refused rather than fired late.
  const next = first ? occurrenceAtOrAfter(compiled, now - CREATE_SLACK_MS, first) : null;
  if (!next)
    throw new ShroomsError(
      'INVALID_PARAMS',
      `the schedule has no occurrence from now on (at ${req.at}${rule.repeat ? ', with its until/count' : ''})`,
    );
  const at = new Date(now).toISOString();
  return {
    id,
    recipients,
    prompt: req.prompt,
    owner: req.origin,
    ...(req.replyTo ? { replyTo: req.replyTo } : {}),
    rule,
    state: 'active',
    next,
    fired: 0,
    missed: 0,
    awaiting: [],
    createdAt: at,
    updatedAt: at,
  };
}
