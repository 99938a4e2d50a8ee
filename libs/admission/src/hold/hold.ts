/**
 * The sharp edge (spec §6): a session that runs tools without asking — pi always does, Claude Code
 * when its signal says `autoApprove` — takes tasks from other agents only when the policy switches
 * it on (`agentTasks: true`). Otherwise the task is admitted with `hold: true`: the bridge shows it
 * as `shrooms/held` and runs it only when its owner releases it.
 *
 * When the session's signal is missing (the session is down or its signal faded) nobody knows how
 * it runs tools; `holdWhenUnknown` (default true) holds the task then, failing closed.
 */
import type { Signal } from '@shrooms/protocol';

/** Harnesses that never ask before running a tool. */
const ALWAYS_AUTO_APPROVE = new Set(['pi']);

export function autoApproves(signal: Pick<Signal, 'autoApprove' | 'harness'>): boolean {
  return signal.autoApprove || ALWAYS_AUTO_APPROVE.has(signal.harness);
}

export interface HoldInput {
  fromAgent: boolean;
  agentTasks: boolean;
  /** The target session's signal; null when there is none (or it cannot be read). */
  signal: Pick<Signal, 'autoApprove' | 'harness'> | null;
  holdWhenUnknown: boolean;
}

/** Why the task must be held, or undefined to run it as usual. */
export function holdReason(h: HoldInput): string | undefined {
  if (!h.fromAgent || h.agentTasks) return undefined;
  if (h.signal === null)
    return h.holdWhenUnknown ? 'the session has no signal, so whether it asks before running tools is unknown' : undefined;
  return autoApproves(h.signal) ? 'the session runs tools without asking and is not switched on for agent tasks' : undefined;
}
