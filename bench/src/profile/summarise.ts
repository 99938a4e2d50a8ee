/**
 * Reads a V8 .cpuprofile and says where the time went: self and inclusive time per function, and
 * self time per area (a package, one of our libs or services, Node internals, GC).
 */
import { readFile } from 'node:fs/promises';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Row {
  name: string;
  ms: number;
  pct: number;
}

export interface ProfileSummary {
  wallMs: number;
  /** Sampled time not idle, ms. */
  activeMs: number;
  byArea: Row[];
  topSelf: Row[];
  topInclusive: Row[];
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

export function areaOf(url: string, fn: string): string {
  if (SPECIAL.has(fn)) return fn;
  if (!url) return '(V8 builtins: JSON, RegExp, …)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const m = /\/(libs|services|bench)\/([^/]+)\//.exec(url);
  if (m) return `${m[1]}/${m[2]}`;
  return 'other';
}

function short(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + '/node_modules/'.length);
  const m = /\/((?:libs|services|bench)\/.*)$/.exec(url);
  return m ? m[1]! : url.replace(/^file:\/\//, '');
}

export async function summariseProfile(file: string, top = 25): Promise<ProfileSummary> {
  const p = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (n: Node) =>
    `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const area = new Map<string, number>();
  let active = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0) / 1000;
    const leaf = byId.get(p.samples[i]!)!;
    const fn = leaf.callFrame.functionName;
    if (fn !== '(idle)') active += dt;
    const a = areaOf(leaf.callFrame.url, fn);
    area.set(a, (area.get(a) ?? 0) + dt);
    const k = keyOf(leaf);
    self.set(k, (self.get(k) ?? 0) + dt);
    if (SPECIAL.has(fn)) continue;
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id)!;
      if (SPECIAL.has(n.callFrame.functionName)) continue;
      const key = keyOf(n);
      if (seen.has(key)) continue;
      seen.add(key);
      incl.set(key, (incl.get(key) ?? 0) + dt);
    }
  }
  const rows = (m: Map<string, number>, skipIdle: boolean) =>
    [...m.entries()]
      .filter(([k]) => !(skipIdle && k.startsWith('(idle)')))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), pct: Math.round((ms / (active || 1)) * 1000) / 10 }));
  return {
    wallMs: Math.round((p.endTime - p.startTime) / 1000),
    activeMs: Math.round(active),
    byArea: rows(area, true),
    topSelf: rows(self, true),
    topInclusive: rows(incl, true),
  };
}
