import { describe, expect, it } from 'vitest';
import { clientOptionsFromEnv, gatewayUrlOf, parseGatewayMap } from './options.js';

describe('gateway addresses as people type them', () => {
  it('reads an address without a scheme as http, and drops a trailing slash', () => {
    expect(gatewayUrlOf('localhost:7387')).toBe('http://localhost:7387');
    expect(gatewayUrlOf('http://127.0.0.1:7387/')).toBe('http://127.0.0.1:7387');
    expect(gatewayUrlOf('https://laptop.home:7387')).toBe('https://laptop.home:7387');
  });

  it('applies to --gateway and to SHROOMS_GATEWAY_URL alike', () => {
    expect(clientOptionsFromEnv({}, { gatewayUrl: 'localhost:7387' }).gatewayUrl).toBe('http://localhost:7387');
    expect(clientOptionsFromEnv({ SHROOMS_GATEWAY_URL: '127.0.0.1:9' }).gatewayUrl).toBe('http://127.0.0.1:9');
  });
});

describe('SHROOMS_GATEWAYS', () => {
  it('reads MACHINE=URL entries (trailing slash dropped) and sets apart the ones it cannot read', () => {
    expect(parseGatewayMap(' laptop=http://10.0.0.1:7387/ , pi5=https://pi5.home:7387,bad,=http://x,nas=10.0.0.9:7387')).toEqual({
      gateways: { laptop: 'http://10.0.0.1:7387', pi5: 'https://pi5.home:7387' },
      malformed: ['bad', '=http://x', 'nas=10.0.0.9:7387'],
    });
    expect(parseGatewayMap('')).toEqual({ gateways: {}, malformed: [] });
  });
});
