/**
 * The guard's NATS contract: `subjects.guardAdmit()` (admit a new task), `subjects.guardControl()`
 * (owners and operators: policy, counters, budgets), the refusals it publishes, and the allow-list
 * policy those speak of (a file, or rules set through control). See services/guard for the rules.
 */
import { z } from 'zod';
import { OriginSchema } from './wire.js';

/**
 * How a gateway admits new tasks (its GATEWAY_GUARD setting): `local` runs admission in the gateway's
 * process over the windows every guard shares; `service` asks the guard service over NATS
 * (`required`, its former name, still means this); `off` admits everything (tests, benchmarks).
 * Here, not in the gateway's config alone, so that `up` checks it without loading the gateway.
 */
export const GatewayGuardSchema = z
  .preprocess((v) => (v === 'required' ? 'service' : v), z.enum(['local', 'service', 'off']))
  .default('local');

export const GuardAdmitRequestSchema = z.object({
  machine: z.string(),
  session: z.string(),
  taskId: z.string(),
  origin: OriginSchema,
  /** Parent task name (`MACHINE/SESSION:ID`) when asked from inside a task. */
  parent: z.string().optional(),
  /** `MACHINE/SESSION` of each task up the chain, root first. */
  chain: z.array(z.string()).default([]),
  depth: z.number().int().min(0).default(0),
  /** True when the sender is an agent (not a person or a schedule). */
  fromAgent: z.boolean().default(false),
  /**
   * Whom the agent budget counts, as the gateway proved it: the claimed `MACHINE/SESSION` when it is
   * a live session of the asking device, else `MACHINE/*` for every other claim of that device.
   * Default: `origin.from`.
   */
  agent: z.string().min(1).max(200).optional(),
});
export type GuardAdmitRequest = z.infer<typeof GuardAdmitRequestSchema>;

export const GuardDecisionSchema = z.object({
  admit: z.boolean(),
  /** When admitted but the session must hold the task for its owner. */
  hold: z.boolean().default(false),
  error: z
    .object({ key: z.string(), message: z.string(), details: z.record(z.string(), z.union([z.string(), z.number()])).optional() })
    .optional(),
});
export type GuardDecision = z.infer<typeof GuardDecisionSchema>;

/** A guard refusal, published on `subjects.refusal(M, S)` for the dashboard and operators. */
export const RefusalEventSchema = z.object({
  at: z.string(),
  machine: z.string(),
  session: z.string(),
  taskId: z.string(),
  device: z.string(),
  from: z.string().optional(),
  key: z.string(),
  code: z.number(),
  message: z.string(),
  details: z.record(z.string(), z.union([z.string(), z.number()])),
});
export type RefusalEvent = z.infer<typeof RefusalEventSchema>;

// ---- the allow-list policy ----------------------------------------------------------------------

const Patterns = z.array(z.string().min(1));

export const PolicyRuleSchema = z
  .object({
    devices: Patterns.optional(),
    agents: Patterns.optional(),
    agentTasks: z.boolean().optional(),
  })
  .strict();
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

export const PolicyFileSchema = z
  .object({
    default: PolicyRuleSchema.optional(),
    sessions: z.record(z.string().min(1), PolicyRuleSchema).optional(),
  })
  .strict();
export type PolicyFile = z.infer<typeof PolicyFileSchema>;

// ---- control --------------------------------------------------------------------------------------

const name = z.string().min(1);

export const GuardControlRequestSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('policy.get'), session: name.optional() }),
  z.object({ action: z.literal('policy.set'), session: name, rule: PolicyRuleSchema }),
  z.object({ action: z.literal('policy.clear'), session: name }),
  z.object({ action: z.literal('counters.get'), device: name, machine: name, session: name }),
  z.object({ action: z.literal('counters.reset'), device: name, machine: name, session: name }),
  z.object({ action: z.literal('budget.get'), device: name, agent: name }),
  z.object({ action: z.literal('budget.reset'), device: name, agent: name }),
]);
export type GuardControlRequest = z.infer<typeof GuardControlRequestSchema>;
