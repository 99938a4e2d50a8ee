import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger } from '@shrooms/runtime';
import { eventually, tempDir, type TempDir } from '@shrooms/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadIdentity, type DeviceIdentity } from './identity.js';

const log = createLogger('identity-test', 'silent');

describe('loadIdentity', () => {
  let temp: TempDir;
  let dir: string;
  let identity: DeviceIdentity | undefined;
  beforeEach(async () => {
    temp = await tempDir('identity');
    dir = temp.path;
  });
  afterEach(async () => {
    identity?.close();
    identity = undefined;
    await temp.remove();
  });

  it('names devices from a plain map, loopback addresses it names included, and the machine itself from the rest of loopback', async () => {
    const peersFile = join(dir, 'peers.yaml');
    await writeFile(peersFile, 'mesh: home\npeers:\n  127.0.0.2: alpha\n  127.0.0.3: beta\n');
    identity = await loadIdentity({ machine: 'laptop', meshAddresses: [], peersFile, log, debounceMs: 10 });
    expect(identity.identify('127.0.0.2')).toEqual({ device: 'alpha.home', name: 'alpha', mesh: 'home', self: false });
    expect(identity.identify('::ffff:127.0.0.3')?.device).toBe('beta.home');
    expect(identity.identify('127.0.0.1')).toMatchObject({ device: 'laptop', self: true });
    expect(identity.identify('::1')).toMatchObject({ device: 'laptop', self: true });
    expect(identity.identify('10.1.1.1')).toBeUndefined();
  });

  it('reloads the map after it changes, without a restart', async () => {
    const peersFile = join(dir, 'peers.yaml');
    await writeFile(peersFile, 'mesh: home\npeers:\n  10.8.0.2: pi5\n');
    identity = await loadIdentity({ machine: 'laptop', meshAddresses: ['10.8.0.1'], peersFile, log, debounceMs: 10 });
    expect(identity.identify('10.8.0.2')?.device).toBe('pi5.home');
    expect(identity.identify('10.8.0.3')).toBeUndefined();
    await writeFile(join(dir, 'peers.tmp'), 'mesh: home\npeers:\n  10.8.0.2: pi5\n  10.8.0.3: homeserver\n');
    await rename(join(dir, 'peers.tmp'), peersFile);
    await eventually(() => identity!.identify('10.8.0.3')?.device === 'homeserver.home');
  });

  it('keeps the last good map when a change does not parse, and logs it', async () => {
    const peersFile = join(dir, 'peers.yaml');
    await writeFile(peersFile, 'peers:\n  10.8.0.2: pi5\n');
    identity = await loadIdentity({ machine: 'laptop', meshAddresses: [], peersFile, log, debounceMs: 10 });
    await writeFile(peersFile, 'peers: [broken\n');
    expect(await identity.reload()).toBe(false);
    expect(identity.identify('10.8.0.2')?.device).toBe('pi5.mesh');
    await writeFile(peersFile, 'peers:\n  10.8.0.2: pi5b\n');
    await eventually(() => identity!.identify('10.8.0.2')?.device === 'pi5b.mesh');
  });

  it('refuses to start on a map that does not parse', async () => {
    const peersFile = join(dir, 'peers.yaml');
    await writeFile(peersFile, 'peers: {10.8.0.2: "no spaces allowed"}\n');
    await expect(loadIdentity({ machine: 'laptop', meshAddresses: [], peersFile, log })).rejects.toThrow(/not a device name/);
  });

  it('names devices from a WireGuard dump and a names file, and follows both', async () => {
    const key = 'xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=';
    const wgDumpFile = join(dir, 'wg0.dump');
    const wgNamesFile = join(dir, 'names.yaml');
    await writeFile(wgDumpFile, `priv\tpub\t51820\toff\n${key}\t(none)\t(none)\t10.8.0.2/32\t0\t0\t0\toff\n`);
    await writeFile(wgNamesFile, `mesh: home\nnames:\n  "${key}": pi5\n`);
    identity = await loadIdentity({ machine: 'laptop', meshAddresses: ['10.8.0.1'], wgDumpFile, wgNamesFile, log, debounceMs: 10 });
    expect(identity.identify('10.8.0.2')?.device).toBe('pi5.home');
    expect(identity.identify('10.8.0.1')).toMatchObject({ device: 'laptop', self: true, mesh: 'home' });
    await writeFile(wgDumpFile, `priv\tpub\t51820\toff\n${key}\t(none)\t(none)\t10.8.0.2/32,10.8.0.20/32\t0\t0\t0\toff\n`);
    await eventually(() => identity!.identify('10.8.0.20')?.device === 'pi5.home');
    await writeFile(wgNamesFile, `mesh: home\nnames:\n  "${key}": raspberry\n`);
    await eventually(() => identity!.identify('10.8.0.2')?.device === 'raspberry.home');
  });

  it('knows only the machine itself when no map is given', async () => {
    identity = await loadIdentity({ machine: 'laptop', meshAddresses: ['10.8.0.1'], log });
    expect(identity.identify('::1')?.self).toBe(true);
    expect(identity.identify('10.8.0.1')?.self).toBe(true);
    expect(identity.identify('10.8.0.2')).toBeUndefined();
  });

  it('refuses half a WireGuard source', async () => {
    await expect(loadIdentity({ machine: 'laptop', meshAddresses: [], wgDumpFile: join(dir, 'x'), log })).rejects.toThrow(/names file/);
  });
});
