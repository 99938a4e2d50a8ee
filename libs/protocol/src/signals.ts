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
  /**
   * The bridge process that renews it: a bridge starting for the session tells a signal left by one
   * that is gone (on its own host, by its pid) from one a live bridge keeps renewing (single.ts).
   */
  instance: z.object({ host: z.string(), pid: z.number().int() }).optional(),
  /** When the bridge wrote this signal (ISO). Readers compute freshness from it. */
  at: z.string(),
  ttlMs: z.number().int(),
});
export type Signal = z.infer<typeof SignalSchema>;

/** How long a signal lasts unrenewed, ms, unless the bridge says otherwise (BRIDGE_SIGNAL_TTL_MS). */
export const DEFAULT_SIGNAL_TTL_MS = 30_000;

/**
 * A signal's age at `now` and its strength (1 just renewed, falling to 0 at its ttl); undefined
 * once it has faded — or when its time cannot be read. Every reader decides freshness here, because
 * servers before 2.11 do not tell watchers that the bucket's TTL removed an entry.
 */
export function signalFreshness(s: Pick<Signal, 'at' | 'ttlMs'>, now = Date.now()): { ageMs: number; strength: number } | undefined {
  const ageMs = Math.max(0, now - Date.parse(s.at));
  if (!(ageMs < s.ttlMs)) return undefined;
  return { ageMs, strength: Math.round((1 - ageMs / s.ttlMs) * 100) / 100 };
}
