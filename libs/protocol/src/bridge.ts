/** Payloads between the gateway (and the tools) and a session's bridge: `subjects.bridge(M, S, op)`. */
import { z } from 'zod';
import { MessageSchema, MetadataSchema, PartSchema, TaskSchema } from './a2a.js';
import { OriginSchema } from './wire.js';

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
  /**
   * The gateway learns of a new task this delivery creates from its ledger watch: the bridge then
   * sends no reply (one NATS message fewer per send). It still replies with every refusal or error
   * and with a task it did not create (a resend).
   */
  quiet: z.boolean().optional(),
  /**
   * With `quiet`: the sender passes over a later `{ ok: true, taken: true }`, so the bridge answers a
   * delivery it took quietly that way, with others, later (nats-server then forgets its reply-to
   * subject: libs/runtime `REPLY_TAKEN`). A sender that does not say so (a gateway from before
   * 2026-12-04, during an upgrade) would take that answer for the task: it is sent nothing, as before.
   */
  takenLater: z.boolean().optional(),
  /**
   * The sender waits for the new task's end and is told nothing of it before (a blocking
   * SendMessage): the bridge may hold its create back a moment and write it with the task's next
   * change, one write for a quick worker's whole task. Absent: the task is stored before the bridge
   * goes on (a non-blocking send or a stream answers with it at once).
   */
  awaited: z.boolean().optional(),
  /**
   * How long the sender of a quiet delivery waits to see its task before it takes the bridge for gone
   * and queues the task in the ledger itself (the gateway's delivery ack limit). A held create is
   * written within half of it, whatever BRIDGE_WRITE_WAIT_MS says.
   */
  seenWithinMs: z.number().int().positive().optional(),
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

/** `reason`: who canceled (shown as `canceled by …`); `why`: the asker's stated cause (`shrooms/cancel_reason`). */
export const CancelRequestSchema = z.object({
  taskId: z.string(),
  origin: OriginSchema,
  reason: z.string().optional(),
  why: z.string().max(300).optional(),
});
export type CancelRequest = z.infer<typeof CancelRequestSchema>;

export const UpdateStatusSchema = z.enum(['done', 'blocked', 'failed']);
export type UpdateStatus = z.infer<typeof UpdateStatusSchema>;

/** worker tools → bridge `update`. The bridge checks the task belongs to its session. */
export const UpdateRequestSchema = z.object({
  taskId: z.string(),
  status: UpdateStatusSchema,
  text: z.string(),
  /** Files and data the worker returns with `done`, added to its answer's artifact. */
  parts: z.array(PartSchema).max(16).optional(),
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
