/**
 * The peers map: which device of the mesh a source address belongs to. Each entry is an address or
 * an allowed-IPs range naming one device (`DEVICE.MESH`); the longest matching range wins, as in
 * WireGuard's own routing. This machine's own mesh addresses are the machine itself, and so are
 * 127.0.0.1 and ::1 (and any address listed under `self`). Other loopback addresses are devices only
 * when the map names them (how tests and single-host demos give devices distinct sources: clients
 * bound to 127.0.0.2, 127.0.0.3, …); an unnamed one is refused like any unnamed source.
 */
import { contains, parseAddress, parseCidr, formatCidr, type Address, type Cidr } from './ip.js';

/** 127.0.0.1 and ::1: the machine talking to itself. */
const isLocalHost = (a: Address) => (a.family === 4 ? a.value === 0x7f000001n : a.value === 1n);

export interface Identity {
  /** The verified device as shown everywhere: `DEVICE.MESH`, or the machine's own name for itself. */
  device: string;
  /** The device's name on its mesh (`pi5` of `pi5.home`). */
  name: string;
  mesh: string;
  /** True when the request came from this machine (loopback or its own mesh address). */
  self: boolean;
}

export interface PeerEntry {
  range: string;
  name: string;
  mesh: string;
}

export interface SelfSpec {
  /** This machine's name (SHROOMS_MACHINE). */
  machine: string;
  /** The mesh this machine is on, for display; 'local' when unknown. */
  mesh?: string;
  /** This machine's own mesh addresses. */
  addresses: string[];
}

/** Source addresses whose answer a peers map keeps (PeersMap.identify). */
const IDENTIFIED_MAX = 1_024;

interface Compiled {
  cidr: Cidr;
  identity: Identity;
}

export class PeersMap {
  private readonly entries: Compiled[];
  private readonly own: Cidr[];
  readonly self: Identity;

  constructor(entries: readonly PeerEntry[], self: SelfSpec) {
    this.entries = entries
      .map((e) => {
        const cidr = parseCidr(e.range);
        if (!cidr) throw new Error(`not an address or range: ${JSON.stringify(e.range)}`);
        return { cidr, identity: { device: `${e.name}.${e.mesh}`, name: e.name, mesh: e.mesh, self: false } };
      })
      .sort((a, b) => b.cidr.prefix - a.cidr.prefix);
    this.own = self.addresses.map((a) => {
      const c = parseCidr(a.split('/')[0]!);
      if (!c) throw new Error(`not an address of this machine: ${JSON.stringify(a)}`);
      return c;
    });
    this.self = { device: self.machine, name: self.machine, mesh: self.mesh ?? 'local', self: true };
  }

  /**
   * The answers given, by source address: every request is identified (the door, then the caller),
   * and a keep-alive connection asks again with the same address; parsing it costs more than the
   * rest of the look-up. A map is immutable (a change of the peers builds a new one), so an answer
   * never goes stale; at most `IDENTIFIED_MAX` are kept, then the memory starts again.
   */
  private readonly identified = new Map<string, Identity | null>();

  /** The device a source address belongs to, or undefined when the mesh does not name it. */
  identify(sourceAddress: string): Identity | undefined {
    const known = this.identified.get(sourceAddress);
    if (known !== undefined) return known ?? undefined;
    const id = this.lookUp(sourceAddress);
    if (this.identified.size >= IDENTIFIED_MAX) this.identified.clear();
    this.identified.set(sourceAddress, id ?? null);
    return id;
  }

  private lookUp(sourceAddress: string): Identity | undefined {
    const a = parseAddress(sourceAddress);
    if (!a) return undefined;
    if (this.own.some((c) => contains(c, a))) return this.self;
    const named = this.entries.find((e) => contains(e.cidr, a))?.identity;
    if (named) return named;
    return isLocalHost(a) ? this.self : undefined;
  }

  /** Every named range, most specific first (for logs and the dashboard). */
  list(): Array<{ range: string; device: string }> {
    return this.entries.map((e) => ({ range: formatCidr(e.cidr), device: e.identity.device }));
  }

  get size(): number {
    return this.entries.length;
  }
}

/** `pi5` + default mesh `home` → pi5/home; `pi5.office` → pi5/office (the last dot starts the mesh). */
export function splitDeviceName(text: string, defaultMesh: string): { name: string; mesh: string } {
  const dot = text.lastIndexOf('.');
  if (dot <= 0 || dot === text.length - 1) return { name: text, mesh: defaultMesh };
  return { name: text.slice(0, dot), mesh: text.slice(dot + 1) };
}
