/**
 * The gateway's identity settings, to `.extend()` the gateway's config schema with:
 *
 *   SHROOMS_PEERS_FILE          plain peers map (YAML/JSON)                      — or —
 *   SHROOMS_WG_DUMP_FILE        output of `wg show <iface> dump`, with
 *   SHROOMS_WG_NAMES_FILE       public key → device name                         — or —
 *   SHROOMS_WG_INTERFACE        a WireGuard interface read live (`wg show IF allowed-ips`), with
 *                               SHROOMS_WG_NAMES_FILE; SHROOMS_WG_POLL_MS how often (1000)
 *   SHROOMS_MESH_ADDRESSES      this machine's mesh addresses, comma-separated (listen there + loopback)
 *   SHROOMS_PEERS_DEBOUNCE_MS   quiet time after a file change before reloading (200)
 *   GATEWAY_ALLOW_UNSAFE_BIND   listen on a non-mesh, non-loopback address anyway (false)
 */
import { envBool } from '@shrooms/runtime';
import { z } from 'zod';
import type { IdentityOptions } from './identity.js';

export const IdentityConfigSchema = z.object({
  SHROOMS_PEERS_FILE: z.string().optional(),
  SHROOMS_WG_DUMP_FILE: z.string().optional(),
  SHROOMS_WG_NAMES_FILE: z.string().optional(),
  SHROOMS_WG_INTERFACE: z.string().optional(),
  SHROOMS_WG_POLL_MS: z.coerce.number().int().min(50).default(1000),
  SHROOMS_MESH_ADDRESSES: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean),
    ),
  SHROOMS_PEERS_DEBOUNCE_MS: z.coerce.number().int().min(1).default(200),
  GATEWAY_ALLOW_UNSAFE_BIND: envBool(false),
});
export type IdentityConfig = z.infer<typeof IdentityConfigSchema>;

export function identityOptions(config: IdentityConfig & { SHROOMS_MACHINE: string }, log: IdentityOptions['log']): IdentityOptions {
  return {
    machine: config.SHROOMS_MACHINE,
    meshAddresses: config.SHROOMS_MESH_ADDRESSES,
    ...(config.SHROOMS_PEERS_FILE ? { peersFile: config.SHROOMS_PEERS_FILE } : {}),
    ...(config.SHROOMS_WG_DUMP_FILE ? { wgDumpFile: config.SHROOMS_WG_DUMP_FILE } : {}),
    ...(config.SHROOMS_WG_NAMES_FILE ? { wgNamesFile: config.SHROOMS_WG_NAMES_FILE } : {}),
    ...(config.SHROOMS_WG_INTERFACE ? { wgInterface: config.SHROOMS_WG_INTERFACE, wgPollMs: config.SHROOMS_WG_POLL_MS } : {}),
    debounceMs: config.SHROOMS_PEERS_DEBOUNCE_MS,
    log,
  };
}
