/**
 * The plain peers map (YAML or JSON):
 *
 * ```yaml
 * mesh: home                  # mesh of names written without one (default "mesh")
 * self: [10.8.0.1, fd00:8::1] # optional: more addresses of this machine
 * peers:
 *   10.8.0.2: pi5             # an address → device pi5.home
 *   10.8.0.3/32: homeserver
 *   fd00:8::4/128: phone.office   # the part after the last dot is the mesh
 *   10.9.0.0/24: lab          # a whole allowed-IPs range is one device
 * ```
 */
import { createRequire } from 'node:module';
import { isValidName } from '@shrooms/protocol';
import type * as Yaml from 'yaml';
import { z } from 'zod';
import { splitDeviceName, type PeerEntry } from './peers.js';

export const DEFAULT_MESH = 'mesh';

const NameSchema = z.string().refine(isValidName, 'not a device name');

export const PeersMapFileSchema = z
  .object({
    mesh: NameSchema.default(DEFAULT_MESH),
    self: z.array(z.string()).default([]),
    peers: z.record(z.string(), NameSchema).default({}),
  })
  .strict();

export interface PeersSource {
  entries: PeerEntry[];
  mesh: string;
  self: string[];
}

// The YAML parser (some 70 modules) is required when a map is first read: most gateways read none.
const require = createRequire(import.meta.url);
let yaml: typeof Yaml | undefined;

export function parseYamlOrJson(text: string, origin: string): unknown {
  try {
    return (yaml ??= require('yaml') as typeof Yaml).parse(text) ?? {};
  } catch (err) {
    throw new Error(`${origin}: not YAML or JSON: ${(err as Error).message}`, { cause: err });
  }
}

export function issues(err: z.ZodError, origin: string): Error {
  return new Error(`${origin}: ${err.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
}

export function parsePeersMapFile(text: string, origin = 'peers map'): PeersSource {
  const parsed = PeersMapFileSchema.safeParse(parseYamlOrJson(text, origin));
  if (!parsed.success) throw issues(parsed.error, origin);
  const { mesh, self, peers } = parsed.data;
  return {
    mesh,
    self,
    entries: Object.entries(peers).map(([range, device]) => ({ range, ...splitDeviceName(device, mesh) })),
  };
}
