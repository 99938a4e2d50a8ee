import { describe, expect, it } from 'vitest';
import { PeersMap, splitDeviceName } from './peers.js';

const map = new PeersMap(
  [
    { range: '10.8.0.2', name: 'pi5', mesh: 'home' },
    { range: '10.8.0.0/24', name: 'router', mesh: 'home' },
    { range: 'fd00:8::4/128', name: 'phone', mesh: 'office' },
    { range: 'fd00:9::/64', name: 'lab', mesh: 'office' },
  ],
  { machine: 'laptop', mesh: 'home', addresses: ['10.8.0.1', 'fd00:8::1/64'] },
);

describe('PeersMap.identify', () => {
  it('names a device from its mesh address', () => {
    expect(map.identify('10.8.0.2')).toEqual({ device: 'pi5.home', name: 'pi5', mesh: 'home', self: false });
    expect(map.identify('fd00:8::4')).toEqual({ device: 'phone.office', name: 'phone', mesh: 'office', self: false });
  });

  it('names every address of an allowed-IPs range, the most specific range first', () => {
    expect(map.identify('10.8.0.77')?.device).toBe('router.home');
    expect(map.identify('fd00:9::abcd')?.device).toBe('lab.office');
    expect(map.identify('10.8.0.2')?.device).toBe('pi5.home');
  });

  it('names an IPv4 peer seen through a dual-stack socket', () => {
    expect(map.identify('::ffff:10.8.0.2')?.device).toBe('pi5.home');
  });

  it("takes 127.0.0.1, ::1 and the machine's own mesh addresses as the machine itself", () => {
    const self = { device: 'laptop', name: 'laptop', mesh: 'home', self: true };
    expect(map.identify('127.0.0.1')).toEqual(self);
    expect(map.identify('127.0.0.3')).toBeUndefined();
    expect(map.identify('::1')).toEqual(self);
    expect(map.identify('::ffff:127.0.0.1')).toEqual(self);
    expect(map.identify('10.8.0.1')).toEqual(self);
    expect(map.identify('fd00:8::1')).toEqual(self);
  });

  it("lets the map name a loopback address as a device, and keeps the machine's own address its own", () => {
    const m = new PeersMap(
      [
        { range: '127.0.0.2', name: 'alpha', mesh: 'test' },
        { range: '10.8.0.0/24', name: 'router', mesh: 'home' },
      ],
      { machine: 'laptop', addresses: ['10.8.0.1'] },
    );
    expect(m.identify('127.0.0.2')?.device).toBe('alpha.test');
    expect(m.identify('127.0.0.1')?.self).toBe(true);
    expect(m.identify('10.8.0.1')?.self).toBe(true);
    expect(m.identify('10.8.0.5')?.device).toBe('router.home');
  });

  it('names nobody outside the map', () => {
    expect(map.identify('192.168.1.20')).toBeUndefined();
    expect(map.identify('fd00:8::5')).toBeUndefined();
    expect(map.identify('not an address')).toBeUndefined();
    expect(map.identify('')).toBeUndefined();
  });

  it('answers an address it was asked before the same, named or not, past the most answers it keeps', () => {
    const m = new PeersMap([{ range: '10.8.0.0/16', name: 'router', mesh: 'home' }], { machine: 'laptop', addresses: ['10.9.0.1'] });
    // More distinct addresses than a map keeps answers for, each asked twice, named ones and strangers alike.
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 1_500; i++) {
        expect(m.identify(`10.8.${i >> 8}.${i & 255}`)?.device).toBe('router.home');
        expect(m.identify(`192.168.${i >> 8}.${i & 255}`)).toBeUndefined();
      }
    expect(m.identify('10.9.0.1')?.self).toBe(true);
    expect(m.identify('10.9.0.1')?.self).toBe(true);
  });

  it('refuses a map with a range it cannot read', () => {
    expect(() => new PeersMap([{ range: '10.8.0.0/40', name: 'x', mesh: 'm' }], { machine: 'm', addresses: [] })).toThrow(/10.8.0.0\/40/);
  });
});

describe('splitDeviceName', () => {
  it('gives a bare name the default mesh', () => {
    expect(splitDeviceName('pi5', 'home')).toEqual({ name: 'pi5', mesh: 'home' });
  });

  it('reads the part after the last dot as the mesh', () => {
    expect(splitDeviceName('pi5.office', 'home')).toEqual({ name: 'pi5', mesh: 'office' });
    expect(splitDeviceName('my.box.office', 'home')).toEqual({ name: 'my.box', mesh: 'office' });
  });
});
