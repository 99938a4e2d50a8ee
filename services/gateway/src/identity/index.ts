/** Device identity: who is asking, named by the mesh from the source address alone. */
export { loadIdentity, type DeviceIdentity, type IdentityOptions } from './identity.js';
export { PeersMap, splitDeviceName, type Identity, type PeerEntry, type SelfSpec } from './peers.js';
export { parsePeersMapFile, PeersMapFileSchema, type PeersSource } from './map-file.js';
export { parseWgDump, peersFromWg, WgNamesFileSchema, type WgPeer } from './wg.js';
export { bindPolicy, type BindDecision } from './bind.js';
export { IdentityConfigSchema, identityOptions, type IdentityConfig } from './config.js';
export { parseAddress, parseCidr, contains, type Address, type Cidr } from './ip.js';
export { requireDevice } from './require.js';
