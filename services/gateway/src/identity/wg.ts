/**
 * Peers from WireGuard itself: the output of `wg show <iface> dump` (or `wg show all dump`) for
 * each peer's allowed-IPs, plus a names file that gives each peer's public key a device name:
 *
 * ```yaml
 * mesh: home
 * names:
 *   "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=": pi5
 *   "TrMvSoP4jYQlY6RIzBgbssQqY3vxI2Pi+y71lOWWXX0=": homeserver
 * ```
 *
 * A peer with no name is not a device of the mesh: its addresses are refused (and logged).
 */
import { isValidName } from '@shrooms/protocol';
import { z } from 'zod';
import { DEFAULT_MESH, issues, parseYamlOrJson, type PeersSource } from './map-file.js';
import { splitDeviceName, type PeerEntry } from './peers.js';

export const WgNamesFileSchema = z
  .object({
    mesh: z.string().refine(isValidName, 'not a mesh name').default(DEFAULT_MESH),
    self: z.array(z.string()).default([]),
    names: z.record(z.string(), z.string().refine(isValidName, 'not a device name')).default({}),
  })
  .strict();

export interface WgPeer {
  publicKey: string;
  allowedIps: string[];
}

/** Peers of a dump; the interface lines (4 fields, or 5 with `all`) are skipped. */
export function parseWgDump(dump: string, origin = 'wg dump'): WgPeer[] {
  const peers: WgPeer[] = [];
  for (const [i, line] of dump.split('\n').entries()) {
    if (!line.trim()) continue;
    const fields = line.split('\t');
    if (fields.length === 4 || fields.length === 5) continue;
    const peer = fields.length === 9 ? fields.slice(1) : fields;
    if (peer.length !== 8) throw new Error(`${origin}: line ${i + 1} is not a peer of \`wg show … dump\` (${fields.length} fields)`);
    const allowed = peer[3]!;
    peers.push({ publicKey: peer[0]!, allowedIps: allowed === '(none)' || allowed === '' ? [] : allowed.split(',') });
  }
  return peers;
}

export interface WgSource extends PeersSource {
  /** Public keys the dump lists but the names file does not name. */
  unnamed: string[];
}

/**
 * Peers of `wg show <iface> allowed-ips`: one line per peer, its public key, a tab, its allowed IPs
 * separated by spaces (or `(none)`). Unlike `dump`, this output never holds the private key.
 */
export function parseWgAllowedIps(text: string, origin = 'wg show allowed-ips'): WgPeer[] {
  const peers: WgPeer[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    const [publicKey, ips = '', ...more] = line.split('\t');
    if (!publicKey || more.length) throw new Error(`${origin}: line ${i + 1} is not a peer of \`wg show … allowed-ips\``);
    const list = ips.trim() === '(none)' ? [] : ips.trim().split(/\s+/).filter(Boolean);
    peers.push({ publicKey, allowedIps: list });
  }
  return peers;
}

export function peersFromWg(dump: string, namesText: string, origins = { dump: 'wg dump', names: 'wg names' }): WgSource {
  return peersFromWgPeers(parseWgDump(dump, origins.dump), namesText, origins.names);
}

/** Device entries for the named peers; the unnamed ones are listed apart (refused). */
export function peersFromWgPeers(wgPeers: WgPeer[], namesText: string, namesOrigin = 'wg names'): WgSource {
  const origins = { names: namesOrigin };
  const parsed = WgNamesFileSchema.safeParse(parseYamlOrJson(namesText, origins.names));
  if (!parsed.success) throw issues(parsed.error, origins.names);
  const { mesh, self, names } = parsed.data;
  const entries: PeerEntry[] = [];
  const unnamed: string[] = [];
  for (const peer of wgPeers) {
    const device = names[peer.publicKey];
    if (!device) {
      unnamed.push(peer.publicKey);
      continue;
    }
    for (const range of peer.allowedIps) entries.push({ range, ...splitDeviceName(device, mesh) });
  }
  return { entries, mesh, self, unnamed };
}
