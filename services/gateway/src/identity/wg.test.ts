import { describe, expect, it } from 'vitest';
import { parseWgAllowedIps, parseWgDump, peersFromWg, peersFromWgPeers } from './wg.js';

const PI5 = 'xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=';
const HOME = 'TrMvSoP4jYQlY6RIzBgbssQqY3vxI2Pi+y71lOWWXX0=';
const STRAY = 'gN65BkIKy1eCE9pP1wdc8ROUtkHLF2PfAqYdyYBz6EA=';

const dump = [
  ['yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=', 'HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=', '51820', 'off'].join('\t'),
  [PI5, '(none)', '192.168.1.50:51820', '10.8.0.2/32,fd00:8::2/128', '1700000000', '100', '200', 'off'].join('\t'),
  [HOME, '(none)', '(none)', '10.8.0.3/32', '0', '0', '0', '25'].join('\t'),
  [STRAY, '(none)', '(none)', '10.8.0.9/32', '0', '0', '0', 'off'].join('\t'),
  '',
].join('\n');

describe('parseWgDump', () => {
  it("reads each peer's public key and allowed-IPs, skipping the interface line", () => {
    expect(parseWgDump(dump)).toEqual([
      { publicKey: PI5, allowedIps: ['10.8.0.2/32', 'fd00:8::2/128'] },
      { publicKey: HOME, allowedIps: ['10.8.0.3/32'] },
      { publicKey: STRAY, allowedIps: ['10.8.0.9/32'] },
    ]);
  });

  it('reads `wg show all dump`, whose lines start with the interface', () => {
    const all = dump
      .split('\n')
      .filter(Boolean)
      .map((l) => `wg0\t${l}`)
      .join('\n');
    expect(parseWgDump(all)).toHaveLength(3);
  });

  it('takes a peer without allowed-IPs as having no addresses', () => {
    expect(parseWgDump([PI5, '(none)', '(none)', '(none)', '0', '0', '0', 'off'].join('\t'))).toEqual([{ publicKey: PI5, allowedIps: [] }]);
  });

  it('refuses a line that is not a peer', () => {
    expect(() => parseWgDump('just some text', 'wg0.dump')).toThrow(/wg0.dump: line 1/);
  });
});

describe('peersFromWg', () => {
  it('names peers from the names file and reports the ones it cannot name', () => {
    const names = `mesh: home\nnames:\n  "${PI5}": pi5\n  "${HOME}": homeserver.lab\n`;
    const source = peersFromWg(dump, names);
    expect(source.entries).toEqual([
      { range: '10.8.0.2/32', name: 'pi5', mesh: 'home' },
      { range: 'fd00:8::2/128', name: 'pi5', mesh: 'home' },
      { range: '10.8.0.3/32', name: 'homeserver', mesh: 'lab' },
    ]);
    expect(source.unnamed).toEqual([STRAY]);
  });
});

describe('parseWgAllowedIps (`wg show IFACE allowed-ips`: the live source, no private key)', () => {
  const shown = `${PI5}\t10.8.0.2/32 fd00:8::2/128\n${HOME}\t10.8.0.3/32\n${STRAY}\t(none)\n`;

  it("reads each peer's public key and its space-separated allowed IPs", () => {
    expect(parseWgAllowedIps(shown)).toEqual([
      { publicKey: PI5, allowedIps: ['10.8.0.2/32', 'fd00:8::2/128'] },
      { publicKey: HOME, allowedIps: ['10.8.0.3/32'] },
      { publicKey: STRAY, allowedIps: [] },
    ]);
  });

  it('names only the peers of the names file', () => {
    const source = peersFromWgPeers(parseWgAllowedIps(shown), `mesh: home\nnames:\n  "${PI5}": pi5\n`);
    expect(source.entries.map((e) => [e.range, e.name, e.mesh])).toEqual([
      ['10.8.0.2/32', 'pi5', 'home'],
      ['fd00:8::2/128', 'pi5', 'home'],
    ]);
    expect(source.unnamed).toEqual([HOME, STRAY]);
  });

  it('refuses a line that is not a peer (a dump line with its private key)', () => {
    expect(() => parseWgAllowedIps(dump)).toThrow(/not a peer of `wg show … allowed-ips`/);
  });
});
