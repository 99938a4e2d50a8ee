/**
 * IPv4 and IPv6 addresses and CIDR ranges as numbers, so a source address can be matched against
 * the mesh's allowed-IPs. IPv4-mapped IPv6 (`::ffff:10.8.0.2`, what a dual-stack socket reports for
 * an IPv4 peer) is the IPv4 address; a zone (`fe80::1%wg0`) is dropped.
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface Address {
  family: 4 | 6;
  value: bigint;
}

export interface Cidr extends Address {
  prefix: number;
}

export function parseAddress(text: string): Address | undefined {
  const raw = text
    .trim()
    .replace(/%.*$/, '')
    .replace(/^\[(.*)\]$/, '$1');
  if (isIPv4(raw)) return { family: 4, value: ipv4Value(raw) };
  if (!isIPv6(raw)) return undefined;
  const value = ipv6Value(raw);
  if (value >> 32n === 0xffffn) return { family: 4, value: value & 0xffffffffn };
  return { family: 6, value };
}

/** `10.8.0.0/24`, `fd00::/64`, or a bare address (a /32 or /128). Host bits are cleared. */
export function parseCidr(text: string): Cidr | undefined {
  const [addr, bits, extra] = text.trim().split('/');
  if (extra !== undefined || addr === undefined) return undefined;
  const mapped = /^::ffff:/i.test(addr.trim());
  const a = parseAddress(addr);
  if (!a) return undefined;
  const width = a.family === 4 ? 32 : 128;
  let prefix = width;
  if (bits !== undefined) {
    if (!/^\d{1,3}$/.test(bits)) return undefined;
    prefix = Number(bits) - (mapped && a.family === 4 ? 96 : 0);
    if (prefix < 0 || prefix > width) return undefined;
  }
  return { family: a.family, prefix, value: a.value & mask(a.family, prefix) };
}

export function contains(range: Cidr, a: Address): boolean {
  return range.family === a.family && (a.value & mask(a.family, range.prefix)) === range.value;
}

export function isLoopback(a: Address): boolean {
  return a.family === 4 ? a.value >> 24n === 127n : a.value === 1n;
}

export function isUnspecified(a: Address): boolean {
  return a.value === 0n;
}

export function formatCidr(c: Cidr): string {
  return `${formatAddress(c)}/${c.prefix}`;
}

export function formatAddress(a: Address): string {
  if (a.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((a.value >> s) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((a.value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // The longest run of two or more zero groups becomes `::` (RFC 5952).
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  if (best.at < 0) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.len).join(':')}`;
}

function mask(family: 4 | 6, prefix: number): bigint {
  const width = family === 4 ? 32n : 128n;
  const all = (1n << width) - 1n;
  return prefix === 0 ? 0n : (all >> (width - BigInt(prefix))) << (width - BigInt(prefix));
}

function ipv4Value(text: string): bigint {
  return text.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

function ipv6Value(text: string): bigint {
  let head = text;
  let tail32: bigint | undefined;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail32 = ipv4Value(text.slice(lastColon + 1));
    head = text.slice(0, lastColon + 1) + '0:0';
  }
  const [left, right] = head.split('::') as [string, string | undefined];
  const l = left ? left.split(':') : [];
  const r = right ? right.split(':') : [];
  const groups = right === undefined ? l : [...l, ...Array<string>(8 - l.length - r.length).fill('0'), ...r];
  let value = groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
  if (tail32 !== undefined) value = (value & ~0xffffffffn) | tail32;
  return value;
}
