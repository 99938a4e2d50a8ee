/** The dashboard's settings, to `.extend()` the gateway's config schema with. */
import { z } from 'zod';

export const DashboardConfigSchema = z.object({
  /** `off` serves no dashboard at all. */
  DASHBOARD: z.enum(['on', 'off']).default('on'),
  /** Live feeds (browser tabs) open at once; more get 503 and fall back to reading. */
  DASHBOARD_MAX_STREAMS: z.coerce.number().int().positive().default(16),
  /** A browser that leaves this much unread is dropped (it reconnects and reloads). */
  DASHBOARD_STREAM_BUFFER_BYTES: z.coerce.number().int().positive().default(1_048_576),
  /** Stop following the ledger after this long with no page open, ms. */
  DASHBOARD_IDLE_MS: z.coerce.number().int().positive().default(600_000),
});
export type DashboardConfig = z.infer<typeof DashboardConfigSchema>;
