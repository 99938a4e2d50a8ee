/**
 * Where the gateway may listen: loopback and this machine's mesh addresses only. Anything else
 * (a wildcard such as 0.0.0.0 or ::, a LAN or public address, a host name other than localhost)
 * would serve people outside the mesh, whom the peers map cannot name; it needs the explicit
 * unsafe override.
 */
import { formatAddress, isLoopback, parseAddress } from './ip.js';

export type BindDecision =
  | { allowed: true; unsafe: false; reason: string }
  | { allowed: true; unsafe: true; reason: string }
  | { allowed: false; unsafe: false; reason: string };

export function bindPolicy(host: string, opts: { meshAddresses: readonly string[]; allowUnsafe?: boolean }): BindDecision {
  const why = unsafeReason(host, opts.meshAddresses);
  if (!why) return { allowed: true, unsafe: false, reason: `${host} is loopback or a mesh address` };
  if (opts.allowUnsafe) return { allowed: true, unsafe: true, reason: `UNSAFE: ${why}; allowed by the explicit override` };
  return {
    allowed: false,
    unsafe: false,
    reason: `refusing to listen on ${host}: ${why}. Listen on loopback or a mesh address, or give the explicit unsafe override`,
  };
}

function unsafeReason(host: string, meshAddresses: readonly string[]): string | undefined {
  if (host.trim().toLowerCase() === 'localhost') return undefined;
  const a = parseAddress(host);
  if (!a) return `${host} is not an address (only "localhost" is taken by name)`;
  if (a.value === 0n) return `${host} listens on every interface`;
  if (isLoopback(a)) return undefined;
  const own = meshAddresses.map((m) => parseAddress(m.split('/')[0]!)).filter((m) => m !== undefined);
  if (own.some((m) => m.family === a.family && m.value === a.value)) return undefined;
  return `${formatAddress(a)} is neither loopback nor a mesh address of this machine (${meshAddresses.join(', ') || 'none configured'})`;
}
