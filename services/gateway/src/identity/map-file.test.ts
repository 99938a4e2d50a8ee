import { describe, expect, it } from 'vitest';
import { parsePeersMapFile } from './map-file.js';

describe('parsePeersMapFile', () => {
  it('reads the YAML form', () => {
    const text = [
      'mesh: home',
      'self: [10.8.0.1]',
      'peers:',
      '  10.8.0.2: pi5',
      '  10.8.0.3/32: homeserver',
      '  "fd00:8::4/128": phone.office',
      '',
    ].join('\n');
    expect(parsePeersMapFile(text)).toEqual({
      mesh: 'home',
      self: ['10.8.0.1'],
      entries: [
        { range: '10.8.0.2', name: 'pi5', mesh: 'home' },
        { range: '10.8.0.3/32', name: 'homeserver', mesh: 'home' },
        { range: 'fd00:8::4/128', name: 'phone', mesh: 'office' },
      ],
    });
  });

  it('reads the JSON form', () => {
    expect(parsePeersMapFile('{"peers": {"127.0.0.2": "alpha"}}').entries).toEqual([{ range: '127.0.0.2', name: 'alpha', mesh: 'mesh' }]);
  });

  it('names the problem in a bad map', () => {
    expect(() => parsePeersMapFile('peers: {10.8.0.2: "bad name"}', 'peers.yaml')).toThrow(/peers.yaml: .*not a device name/);
    expect(() => parsePeersMapFile('peer: {}', 'peers.yaml')).toThrow(/peers.yaml/);
    expect(() => parsePeersMapFile('peers: [oops', 'peers.yaml')).toThrow(/not YAML or JSON/);
  });
});
