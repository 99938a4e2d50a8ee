import { describe, expect, it } from 'vitest';
import { PeersMap } from './peers.js';
import { requireDevice } from './require.js';

const map = new PeersMap([{ range: '127.0.0.2', name: 'alpha', mesh: 'test' }], { machine: 'laptop', addresses: [] });

describe('requireDevice', () => {
  it('returns the device the map names', () => {
    expect(requireDevice(map, '127.0.0.2').device).toBe('alpha.test');
  });

  it('refuses an address the map does not name with UNKNOWN_DEVICE', () => {
    expect(() => requireDevice(map, '192.0.2.1')).toThrow(expect.objectContaining({ key: 'UNKNOWN_DEVICE' }));
    expect(() => requireDevice(map, undefined)).toThrow(expect.objectContaining({ key: 'UNKNOWN_DEVICE' }));
  });
});
