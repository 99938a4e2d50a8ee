/**
 * The admission settings, one zod shape over the environment that every process admitting tasks
 * extends (the guard service; a gateway that admits in its own process, GATEWAY_GUARD=local). Names
 * carry their units. Defaults are the spec's (§6): 30 new tasks an hour from one device to one
 * session, chains at most 3 deep. Processes that share windows must share these settings too.
 */
import { envBool } from '@shrooms/runtime';
import { z } from 'zod';
import { WINDOW_MAX_ENTRIES } from './window/window.js';

const positiveInt = (dflt: number) => z.coerce.number().int().min(1).default(dflt);
/** A window's limit: one window holds at most WINDOW_MAX_ENTRIES ids (window/window.ts says why). */
const windowMax = (min: number, dflt: number) =>
  z.coerce
    .number()
    .int()
    .min(min)
    .max(WINDOW_MAX_ENTRIES, `at most ${WINDOW_MAX_ENTRIES}: a window keeps every task id it admitted in one NATS message`)
    .default(dflt);
const HOUR_MS = 60 * 60 * 1000;

export const AdmissionConfigSchema = z.object({
  /** New tasks one device may give one session within the window (the loop guard); at most 1 000. */
  GUARD_RATE_MAX: windowMax(1, 30),
  /** Length of the loop guard's sliding window, ms. */
  GUARD_RATE_WINDOW_MS: positiveInt(HOUR_MS),
  /** Deepest task allowed below a root task (a person's message or a schedule is depth 0). */
  GUARD_MAX_DEPTH: z.coerce.number().int().min(0).default(3),
  /** New tasks one asking agent (claimed MACHINE/SESSION on one device) may create per window; 0 = no budget. */
  GUARD_BUDGET_MAX: windowMax(0, 100),
  /** Length of the budget's sliding window, ms. */
  GUARD_BUDGET_WINDOW_MS: positiveInt(HOUR_MS),
  /** Allow-list policy file (YAML or JSON); reloaded when it changes. Unset: everyone on the mesh. */
  GUARD_POLICY_FILE: z.string().optional(),
  /** Quiet time after a change of the policy file before it is read again, ms. */
  GUARD_POLICY_DEBOUNCE_MS: positiveInt(200),
  /**
   * How long one admit may spend winning the compare-and-set on a shared window, from the moment
   * the request arrived, ms. Past it the answer is GUARD_UNAVAILABLE and nothing is counted. Keep it
   * below the gateway's guard timeout (2 000 ms by default).
   */
  GUARD_CAS_DEADLINE_MS: positiveInt(1_500),
  /**
   * Hold agent tasks for a session whose signal is missing (so nobody knows whether it runs tools
   * without asking). Fail closed by default.
   */
  GUARD_HOLD_WHEN_UNKNOWN: envBool(true),
});
export type AdmissionConfig = z.infer<typeof AdmissionConfigSchema>;
