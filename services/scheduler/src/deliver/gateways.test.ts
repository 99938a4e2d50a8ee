import { describe, expect, it } from 'vitest';
import { gatewayResolver } from './gateways.js';

describe('gatewayResolver', () => {
  const resolve = gatewayResolver(null, { machine: 'home', localUrl: 'http://127.0.0.1:7387', staticMap: { pi5: 'http://10.0.0.3:7387' } });

  it('uses the static map for a machine it names', async () => {
    expect(await resolve('pi5', 'tests')).toBe('http://10.0.0.3:7387');
  });

  it('uses the local gateway for this machine when nothing else names one', async () => {
    expect(await resolve('home', 'review')).toBe('http://127.0.0.1:7387');
  });

  it('knows no gateway for another machine without a signal or a map entry', async () => {
    expect(await resolve('laptop', 'webapp')).toBeNull();
  });
});
