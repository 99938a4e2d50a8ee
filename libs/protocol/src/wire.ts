/**
 * Payloads that travel over NATS between our services (not A2A). One schema each; parsed at the
 * receiving edge.
 */
import { z } from 'zod';
import { MessageSchema, MetadataSchema, TaskSchema } from './a2a.js';

/** Who is asking: the device the mesh verified, and the session it claims. */
export const OriginSchema = z.object({
  /** Verified device, `DEVICE.MESH` (or the machine's own name for local requests). */
  device: z.string(),
  /** Claimed `MACHINE/SESSION`, if any. Shown beside the device, never instead of it. */
  from: z.string().optional(),
});
export type Origin = z.infer<typeof OriginSchema>;

/** gateway → bridge `deliver`: a new task, or an answer to a blocked one. */
export const DeliverRequestSchema = z.object({
  machine: z.string(),
  session: z.string(),
  message: MessageSchema,
  origin: OriginSchema,
  /** Request-level metadata (parent, chain, depth, traceparent, schedule …). */
  metadata: MetadataSchema.default({}),
  /** Set when the message answers an existing task (SendMessage with taskId). */
  taskId: z.string().optional(),
});
export type DeliverRequest = z.infer<typeof DeliverRequestSchema>;

export const TaskReplySchema = z.union([
  /** `v`: the ledger entry's version of `task` (deliver answers it, so the gateway need not read it back). */
  z.object({ ok: z.literal(true), task: TaskSchema, v: z.number().int().optional(), created: z.boolean().optional() }),
  z.object({
    ok: z.literal(false),
    error: z.object({ key: z.string(), message: z.string(), details: z.record(z.string(), z.union([z.string(), z.number()])).optional() }),
  }),
]);
export type TaskReply = z.infer<typeof TaskReplySchema>;

export const CancelRequestSchema = z.object({ taskId: z.string(), origin: OriginSchema, reason: z.string().optional() });
export type CancelRequest = z.infer<typeof CancelRequestSchema>;

export const UpdateStatusSchema = z.enum(['done', 'blocked', 'failed']);
export type UpdateStatus = z.infer<typeof UpdateStatusSchema>;

/** worker tools → bridge `update`. The bridge checks the task belongs to its session. */
export const UpdateRequestSchema = z.object({
  taskId: z.string(),
  status: UpdateStatusSchema,
  text: z.string(),
  /** The session that claims to be the worker (from its environment). */
  session: z.string(),
  machine: z.string(),
});
export type UpdateRequest = z.infer<typeof UpdateRequestSchema>;

export const ControlRequestSchema = z.object({
  action: z.enum(['release', 'reject', 'stop_reminders', 'resume_reminders']),
  taskId: z.string().optional(),
  origin: OriginSchema,
});
export type ControlRequest = z.infer<typeof ControlRequestSchema>;

/** The signal a bridge renews in the field. Decays by the bucket's TTL. */
export const SignalSchema = z.object({
  machine: z.string(),
  session: z.string(),
  harness: z.string(),
  state: z.enum(['starting', 'idle', 'working', 'waiting', 'stopped']),
  cwd: z.string().optional(),
  gatewayUrl: z.string().optional(),
  openTasks: z.number().int().default(0),
  queuedTasks: z.number().int().default(0),
  lastSpokeAt: z.string().optional(),
  autoApprove: z.boolean().default(false),
  remindersStopped: z.boolean().default(false),
  /** When the bridge wrote this signal (ISO). Readers compute freshness from it. */
  at: z.string(),
  ttlMs: z.number().int(),
});
export type Signal = z.infer<typeof SignalSchema>;

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
