/**
 * The guard's `control` endpoint (owners and operators, through the gateway or the NATS CLI):
 *
 *   { action: "policy.get", session?: "MACHINE/SESSION" }   the file policy, the control rules, and
 *                                                            the rule in force for `session`
 *   { action: "policy.set", session: PATTERN, rule: RULE }   set a rule (replaces the file's rule
 *                                                            for the same pattern on every replica)
 *   { action: "policy.clear", session: PATTERN }             drop a control rule
 *   { action: "counters.get", device, machine, session }     a loop-guard window
 *   { action: "counters.reset", device, machine, session }   empty a loop-guard window
 *   { action: "budget.get", device, agent }                  an agent's budget window
 *   { action: "budget.reset", device, agent }                empty it
 */
import { ShroomsError, keys, type GuardControlRequest, type PolicyFile } from '@shrooms/protocol';

import type { PolicyOverrides } from '../policy/overrides.js';
import { splitPattern } from '../policy/overrides.js';
import type { EffectiveRule } from '../policy/schema.js';
import type { WindowStore } from '../window/store.js';
import type { WindowSpec } from '../window/window.js';

export interface ControlDeps {
  windows: WindowStore;
  overrides: PolicyOverrides;
  filePolicy: () => PolicyFile;
  ruleFor: (agent: string) => EffectiveRule;
  rate: WindowSpec;
  budget: WindowSpec | null;
}

export type Control = (req: GuardControlRequest) => Promise<Record<string, unknown>>;

export function controller(deps: ControlDeps): Control {
  return async function control(req: GuardControlRequest): Promise<Record<string, unknown>> {
    switch (req.action) {
      case 'policy.get':
        return {
          file: deps.filePolicy(),
          rules: Object.fromEntries(deps.overrides.rules),
          ...(req.session ? { effective: deps.ruleFor(req.session) } : {}),
        };
      case 'policy.set':
        checkPattern(req.session);
        await deps.overrides.set(req.session, req.rule);
        return { session: req.session, rule: req.rule };
      case 'policy.clear':
        checkPattern(req.session);
        await deps.overrides.clear(req.session);
        return { session: req.session };
      case 'counters.get':
        return {
          ...(await deps.windows.inspect(keys.rate(req.device, req.machine, req.session), deps.rate)),
          limit: deps.rate.max,
          windowMs: deps.rate.windowMs,
        };
      case 'counters.reset':
        await deps.windows.reset(keys.rate(req.device, req.machine, req.session));
        return {};
      case 'budget.get': {
        const spec = deps.budget ?? { max: 0, windowMs: deps.rate.windowMs };
        return { ...(await deps.windows.inspect(keys.budget(req.device, req.agent), spec)), limit: spec.max, windowMs: spec.windowMs };
      }
      case 'budget.reset':
        await deps.windows.reset(keys.budget(req.device, req.agent));
        return {};
    }
  };
}

function checkPattern(pattern: string): void {
  try {
    splitPattern(pattern);
  } catch (err) {
    throw new ShroomsError('INVALID_PARAMS', (err as Error).message);
  }
}
