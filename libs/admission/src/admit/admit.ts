/**
 * One admission decision, in this order (a refused check counts nothing):
 *   1. the chain (cycle, then depth)            → CHAIN_CYCLE / CHAIN_TOO_DEEP
 *   2. the session's allow-list                 → NOT_ALLOWED
 *   3. the loop guard: device → session window  → LOOP_GUARD (retryAfterSeconds)
 *   4. the asking agent's budget                → BUDGET_EXCEEDED (retryAfterSeconds); the loop-guard
 *                                                 place taken in step 3 is given back
 *   5. the sharp edge                           → admitted with hold: true
 * Admitting the same task id again is idempotent: it is already in both windows and counts once.
 */
import { ShroomsError, formatAgent, isValidName, toWireError, type GuardAdmitRequest, type GuardDecision } from '@shrooms/protocol';
import { keys } from '@shrooms/protocol';
import type { Logger } from '@shrooms/runtime';
import { checkChain } from '../chain/chain.js';
import { holdReason } from '../hold/hold.js';
import type { SignalReader } from '../hold/signals.js';
import { refusalReason } from '../policy/match.js';
import type { EffectiveRule } from '../policy/schema.js';
import { preciseNow, type WindowStore } from '../window/store.js';
import type { WindowSpec } from '../window/window.js';

export interface AdmitLimits {
  rate: WindowSpec;
  /** null: no budget. */
  budget: WindowSpec | null;
  maxDepth: number;
  casDeadlineMs: number;
  holdWhenUnknown: boolean;
}

export interface AdmitDeps {
  limits: AdmitLimits;
  windows: WindowStore;
  ruleFor: (agent: string) => EffectiveRule;
  readSignal: SignalReader;
  /** Called with every refusal (published for the dashboard). */
  onRefusal: (req: GuardAdmitRequest, err: ShroomsError) => void;
  log: Logger;
}

export type Admit = (req: GuardAdmitRequest, receivedAt?: number) => Promise<GuardDecision>;

export function admitter(deps: AdmitDeps): Admit {
  const { limits, windows, log } = deps;

  async function decide(req: GuardAdmitRequest, deadline: number, arrivedAt: number): Promise<GuardDecision> {
    const target = formatAgent({ machine: req.machine, session: req.session });
    const chainRefusal = checkChain(req, limits.maxDepth);
    if (chainRefusal) throw chainRefusal;

    const rule = deps.ruleFor(target);
    const notAllowed = refusalReason(rule, { device: req.origin.device, from: req.origin.from, fromAgent: req.fromAgent });
    if (notAllowed)
      throw new ShroomsError('NOT_ALLOWED', `${target} does not take tasks from here: ${notAllowed}`, {
        session: target,
        device: req.origin.device,
      });

    const rateKey = keys.rate(req.origin.device, req.machine, req.session);
    const rate = await windows.reserve(rateKey, req.taskId, limits.rate, deadline, arrivedAt);
    if (!rate.ok) {
      throw new ShroomsError(
        'LOOP_GUARD',
        `${req.origin.device} gave ${target} ${rate.count} new tasks within ${seconds(limits.rate.windowMs)} s; at most ${limits.rate.max}`,
        {
          retryAfterSeconds: seconds(rate.retryAfterMs),
          limit: limits.rate.max,
          windowSeconds: seconds(limits.rate.windowMs),
        },
      );
    }

    const agent = req.fromAgent ? (req.agent ?? req.origin.from) : undefined;
    if (limits.budget && agent) {
      const budgetKey = keys.budget(req.origin.device, agent);
      let budget;
      try {
        budget = await windows.reserve(budgetKey, req.taskId, limits.budget, deadline, arrivedAt);
      } catch (err) {
        if (rate.counted) await giveBack(rateKey, req.taskId);
        throw err;
      }
      if (!budget.ok) {
        if (rate.counted) await giveBack(rateKey, req.taskId);
        throw new ShroomsError(
          'BUDGET_EXCEEDED',
          `${agent} on ${req.origin.device} asked for ${budget.count} new tasks within ${seconds(limits.budget.windowMs)} s; its budget is ${limits.budget.max}`,
          {
            retryAfterSeconds: seconds(budget.retryAfterMs),
            limit: limits.budget.max,
            windowSeconds: seconds(limits.budget.windowMs),
          },
        );
      }
    }

    const why = holdReason({
      fromAgent: req.fromAgent,
      agentTasks: rule.agentTasks,
      signal: req.fromAgent && !rule.agentTasks ? await deps.readSignal(req.machine, req.session) : null,
      holdWhenUnknown: limits.holdWhenUnknown,
    });
    if (why)
      log.info(
        { taskId: req.taskId, session: target, device: req.origin.device, from: req.origin.from, reason: why },
        'task admitted on hold',
      );
    return { admit: true, hold: why !== undefined };
  }

  /** Best effort: a failure leaves the place taken (the guard errs on the side of refusing). */
  async function giveBack(key: string, taskId: string): Promise<void> {
    await windows
      .release(key, taskId, Date.now() + limits.casDeadlineMs)
      .catch((err: unknown) => log.warn({ err, key, taskId }, 'could not give back a loop-guard place'));
  }

  return async function admit(req, receivedAt = Date.now()) {
    validate(req);
    try {
      // When the request arrived, on the windows' own clock: taken here, a little after it did (the
      // safe side: only reads begun after this may answer it).
      return await decide(req, receivedAt + limits.casDeadlineMs, preciseNow());
    } catch (err) {
      if (!(err instanceof ShroomsError) || !isRefusal(err)) throw err;
      log.info(
        {
          taskId: req.taskId,
          machine: req.machine,
          session: req.session,
          device: req.origin.device,
          from: req.origin.from,
          code: err.key,
          details: err.details,
        },
        'task refused',
      );
      deps.onRefusal(req, err);
      return { admit: false, hold: false, error: toWireError(err) };
    }
  };
}

const REFUSALS = new Set(['CHAIN_CYCLE', 'CHAIN_TOO_DEEP', 'NOT_ALLOWED', 'LOOP_GUARD', 'BUDGET_EXCEEDED']);
const isRefusal = (err: ShroomsError) => REFUSALS.has(err.key);

function validate(req: GuardAdmitRequest): void {
  if (!isValidName(req.machine) || !isValidName(req.session))
    throw new ShroomsError('INVALID_PARAMS', `not a session name: ${JSON.stringify(`${req.machine}/${req.session}`)}`);
  if (!req.taskId) throw new ShroomsError('INVALID_PARAMS', 'taskId is empty');
  if (!req.origin.device) throw new ShroomsError('INVALID_PARAMS', 'origin.device is empty');
  if (req.origin.from === '') throw new ShroomsError('INVALID_PARAMS', 'origin.from is empty');
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
