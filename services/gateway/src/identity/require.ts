/**
 * The gateway's one call per request: the device behind the connection's source address
 * (`request.socket.remoteAddress`, never a header), or UNKNOWN_DEVICE.
 */
import { ShroomsError } from '@shrooms/protocol';
import type { Identity } from './peers.js';

export function requireDevice(
  identity: { identify(sourceAddress: string): Identity | undefined },
  sourceAddress: string | undefined,
): Identity {
  const found = sourceAddress ? identity.identify(sourceAddress) : undefined;
  if (!found)
    throw new ShroomsError('UNKNOWN_DEVICE', `${sourceAddress ?? 'an unknown address'} is not a device of the mesh`, {
      source: sourceAddress ?? '',
    });
  return found;
}
