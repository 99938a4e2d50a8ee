import { describe, expect, it } from 'vitest';
import { contains, formatAddress, formatCidr, isLoopback, parseAddress, parseCidr } from './ip.js';

describe('parseAddress', () => {
  it('reads IPv4', () => {
    expect(parseAddress('10.8.0.2')).toEqual({ family: 4, value: 0x0a080002n });
  });

  it('reads IPv6 with and without ::', () => {
    expect(parseAddress('fd00::2')).toEqual({ family: 6, value: (0xfd00n << 112n) | 2n });
    expect(parseAddress('fd00:0:0:0:0:0:0:2')).toEqual(parseAddress('fd00::2'));
    expect(parseAddress('::1')).toEqual({ family: 6, value: 1n });
    expect(parseAddress('::')).toEqual({ family: 6, value: 0n });
  });

  it('takes IPv4-mapped IPv6 as the IPv4 address, in either spelling', () => {
    expect(parseAddress('::ffff:10.8.0.2')).toEqual(parseAddress('10.8.0.2'));
    expect(parseAddress('::ffff:a08:2')).toEqual(parseAddress('10.8.0.2'));
    expect(parseAddress('::FFFF:127.0.0.1')).toEqual(parseAddress('127.0.0.1'));
  });

  it('drops a zone and brackets', () => {
    expect(parseAddress('fe80::1%wg0')).toEqual(parseAddress('fe80::1'));
    expect(parseAddress('[fd00::2]')).toEqual(parseAddress('fd00::2'));
  });

  it('reads an IPv6 address that ends in an IPv4 one', () => {
    expect(parseAddress('64:ff9b::192.0.2.33')).toEqual({ family: 6, value: (0x64n << 112n) | (0xff9bn << 96n) | 0xc0000221n });
  });

  it('refuses anything that is not an address', () => {
    for (const bad of ['', 'laptop', '10.8.0', '10.8.0.256', 'fd00:::1', '1.2.3.4.5', '10.8.0.2/32'])
      expect(parseAddress(bad)).toBeUndefined();
  });
});

describe('parseCidr and contains', () => {
  it('matches addresses inside an IPv4 range only', () => {
    const c = parseCidr('10.8.0.0/24')!;
    expect(contains(c, parseAddress('10.8.0.77')!)).toBe(true);
    expect(contains(c, parseAddress('10.8.1.1')!)).toBe(false);
    expect(contains(c, parseAddress('::ffff:10.8.0.77')!)).toBe(true);
  });

  it('matches addresses inside an IPv6 range only', () => {
    const c = parseCidr('fd00:8::/64')!;
    expect(contains(c, parseAddress('fd00:8::1234')!)).toBe(true);
    expect(contains(c, parseAddress('fd00:9::1')!)).toBe(false);
  });

  it('never matches across families', () => {
    expect(contains(parseCidr('0.0.0.0/0')!, parseAddress('fd00::1')!)).toBe(false);
    expect(contains(parseCidr('::/0')!, parseAddress('10.0.0.1')!)).toBe(false);
  });

  it('takes a bare address as a single host and clears host bits', () => {
    expect(parseCidr('10.8.0.2')).toMatchObject({ prefix: 32 });
    expect(parseCidr('fd00::2')).toMatchObject({ prefix: 128 });
    expect(formatCidr(parseCidr('10.8.0.77/24')!)).toBe('10.8.0.0/24');
  });

  it('reads an IPv4-mapped range as the IPv4 range', () => {
    expect(parseCidr('::ffff:10.8.0.0/120')).toEqual(parseCidr('10.8.0.0/24'));
  });

  it('refuses bad ranges', () => {
    for (const bad of ['10.8.0.0/33', 'fd00::/129', '10.8.0.0/x', '10.8.0.0/24/1', 'pi5/32']) expect(parseCidr(bad)).toBeUndefined();
  });
});

describe('loopback and formatting', () => {
  it('knows loopback in both families', () => {
    expect(isLoopback(parseAddress('127.0.0.3')!)).toBe(true);
    expect(isLoopback(parseAddress('::1')!)).toBe(true);
    expect(isLoopback(parseAddress('::ffff:127.0.0.1')!)).toBe(true);
    expect(isLoopback(parseAddress('10.0.0.1')!)).toBe(false);
  });

  it('prints addresses back', () => {
    expect(formatAddress(parseAddress('10.8.0.2')!)).toBe('10.8.0.2');
    expect(formatAddress(parseAddress('fd00::2')!)).toBe('fd00::2');
    expect(formatAddress(parseAddress('fd00:0:0:1::')!)).toBe('fd00:0:0:1::');
    expect(formatAddress(parseAddress('::1')!)).toBe('::1');
    expect(formatAddress(parseAddress('1:0:2:0:3:0:4:0')!)).toBe('1:0:2:0:3:0:4:0');
  });
});
