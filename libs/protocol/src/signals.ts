/** The signal field (KV `BUCKETS.signals`): what each bridge says of its session. */
import { z } from 'zod';

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
  /** The task (`SESSION:ID`) the session is working on now: an ask it sends without a parent is that task's child. */
  task: z.string().optional(),
  /** When the bridge wrote this signal (ISO). Readers compute freshness from it. */
  at: z.string(),
  ttlMs: z.number().int(),
});
export type Signal = z.infer<typeof SignalSchema>;
