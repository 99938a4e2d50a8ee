import { AdmissionConfigSchema } from '@shrooms/admission';
import { BaseConfigSchema } from '@shrooms/runtime';
import { DashboardConfigSchema } from './dashboard/config.js';
import { IdentityConfigSchema } from './identity/config.js';
import { allowedHostName } from './doors/hosts.js';
import { DEFAULT_LIMITS, GatewayGuardSchema } from '@shrooms/protocol';
import { z } from 'zod';

const ms = (d: number) => z.coerce.number().int().positive().default(d);

/**
 * GATEWAY_ALLOWED_HOSTS, comma-separated, as the door compares them with a request's Host: each
 * entry's hostname (doors/hosts.ts); an entry that is no host name is refused, not left to never match.
 */
const AllowedHostsSchema = z
  .string()
  .default('')
  .transform((list, ctx) => {
    const names: string[] = [];
    for (const entry of list.split(',').map((h) => h.trim())) {
      if (!entry) continue;
      const name = allowedHostName(entry);
      if (name) names.push(name);
      else
        ctx.addIssue({
          code: 'custom',
          message: `GATEWAY_ALLOWED_HOSTS entry ${JSON.stringify(entry)} is not a host name: write NAME, NAME:PORT or [IPV6]:PORT`,
        });
    }
    return names;
  });

export const GatewayConfigSchema = BaseConfigSchema.extend(IdentityConfigSchema.shape)
  .extend(DashboardConfigSchema.shape)
  // The admission settings (GUARD_*), used when this gateway admits new tasks itself.
  .extend(AdmissionConfigSchema.shape)
  .extend({
    /**
     * Where to listen, comma-separated: loopback and/or the machine's mesh addresses. Anything else is
     * refused unless GATEWAY_ALLOW_UNSAFE_BIND (see identity/).
     */
    GATEWAY_HOST: z.string().default('127.0.0.1'),
    GATEWAY_PORT: z.coerce.number().int().min(0).max(65535).default(7387),
    /** URL other machines use to reach this gateway (announced in cards and signals). */
    GATEWAY_PUBLIC_URL: z.string().optional(),
    /**
     * Host names the gateway answers to besides its own addresses, `localhost`, the machine's name and
     * the public URL's host (comma-separated, e.g. `laptop.home`, `laptop.home:7387`, `[fd00::1]:7387`;
     * a port is ignored); any other Host is refused (DNS rebinding).
     */
    GATEWAY_ALLOWED_HOSTS: AllowedHostsSchema,
    /**
     * The session the machine card's interfaces lead to, and that `POST /a2a` serves when a request
     * names no session (the A2A TCK and generic clients start from the host root). Default: the only
     * session there is, if just one.
     */
    GATEWAY_DEFAULT_SESSION: z.string().optional(),
    /** How a new task is admitted (libs/protocol's GatewayGuardSchema; `local` uses the GUARD_* settings). */
    GATEWAY_GUARD: GatewayGuardSchema,
    GATEWAY_SSE_HEARTBEAT_MS: ms(15_000),
    GATEWAY_EXPIRY_SWEEP_MS: ms(60_000),
    LIMIT_BODY_BYTES: ms(DEFAULT_LIMITS.bodyBytes),
    LIMIT_TEXT_BYTES: ms(DEFAULT_LIMITS.textBytes),
    LIMIT_PART_BYTES: ms(DEFAULT_LIMITS.partBytes),
    LIMIT_PARTS_PER_MESSAGE: ms(DEFAULT_LIMITS.partsPerMessage),
    LIMIT_SSE_STREAMS: ms(DEFAULT_LIMITS.sseStreams),
    LIMIT_SSE_STREAMS_PER_DEVICE: ms(DEFAULT_LIMITS.sseStreamsPerDevice),
    LIMIT_SSE_BUFFER_BYTES: ms(DEFAULT_LIMITS.sseBufferBytes),
    LIMIT_BLOCKING_WAIT_MS: ms(DEFAULT_LIMITS.blockingWaitMs),
    LIMIT_BLOCKING_WAITS_PER_DEVICE: ms(DEFAULT_LIMITS.blockingWaitsPerDevice),
    LIMIT_DELIVERY_ACK_MS: ms(DEFAULT_LIMITS.deliveryAckMs),
    LIMIT_GUARD_TIMEOUT_MS: ms(DEFAULT_LIMITS.guardTimeoutMs),
    LIMIT_TASK_EXPIRY_MS: ms(DEFAULT_LIMITS.taskExpiryMs),
    LIMIT_FINISHED_RETENTION_MS: ms(DEFAULT_LIMITS.finishedRetentionMs),
    LIMIT_TASK_BYTES: ms(DEFAULT_LIMITS.taskBytes),
    /** The ledger's most tasks; set when the gateway makes the bucket (and raised or lowered on a single-node one). */
    LIMIT_RETAINED_TASKS: ms(DEFAULT_LIMITS.retainedTasks),
    LIMIT_METADATA_ENTRIES: ms(DEFAULT_LIMITS.metadataEntries),
  })
  // The bucket keeps a task LIMIT_FINISHED_RETENTION_MS after its last write, open or not: an open task
  // must be expired (written) before then, or it would vanish from the ledger with no word of why.
  .superRefine((c, ctx) => {
    if (c.LIMIT_FINISHED_RETENTION_MS <= c.LIMIT_TASK_EXPIRY_MS)
      ctx.addIssue({
        code: 'custom',
        path: ['LIMIT_FINISHED_RETENTION_MS'],
        message: `${c.LIMIT_FINISHED_RETENTION_MS} ms is not longer than LIMIT_TASK_EXPIRY_MS (${c.LIMIT_TASK_EXPIRY_MS} ms): the ledger would drop an open task before it expires; keep finished tasks longer than open ones may wait`,
      });
  });
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

export function listenHosts(c: GatewayConfig): string[] {
  return c.GATEWAY_HOST.split(',')
    .map((h) => h.trim())
    .filter(Boolean);
}

export function publicUrl(c: GatewayConfig, port: number): string {
  const host = c.SHROOMS_MESH_ADDRESSES[0]?.split('/')[0] ?? listenHosts(c)[0] ?? '127.0.0.1';
  return (c.GATEWAY_PUBLIC_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/$/, '');
}
