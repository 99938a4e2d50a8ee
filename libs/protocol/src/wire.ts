/**
 * Payloads that travel over NATS between our services (not A2A), one schema each, parsed at the
 * receiving edge: who asks (here), the bridge's (bridge.ts), the guard's (guard.ts), the scheduler's
 * (scheduler.ts) and the signal field's (signals.ts).
 */
import { z } from 'zod';

/** Who is asking: the device the mesh verified, and the session it claims. */
export const OriginSchema = z.object({
  /** Verified device, `DEVICE.MESH` (or the machine's own name for local requests). */
  device: z.string(),
  /** Claimed `MACHINE/SESSION`, if any. Shown beside the device, never instead of it. */
  from: z.string().optional(),
});
export type Origin = z.infer<typeof OriginSchema>;
