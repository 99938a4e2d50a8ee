/**
 * The dashboard's index of tasks: one small row per task (see rows.ts), ordered by when each task was
 * asked, with the parent → children links of ask chains. Pages, counts, chains and the attention list
 * are answered from here without reading the ledger, so a page of 50 costs the same with 10,000
 * tasks as with 10; it holds no task bodies, so its size is bounded by the ledger's retention.
 *
 * Over 300 lines because the index, its ordering and the chain links change together on every
 * update; the row shape is apart in rows.ts.
 */
import { TASK_STATES, type TaskState } from '@shrooms/protocol';
import { matches, searchFor } from './app/match.js';
import { keptFrom } from '@shrooms/ledger';
import type { TaskRow } from './rows.js';

export const STATE_FILTERS = [
  'all',
  'open',
  'finished',
  'queued',
  'held',
  'stalled',
  ...TASK_STATES.filter((s) => s !== 'TASK_STATE_UNSPECIFIED'),
] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];

export interface TaskQuery {
  /** `MACHINE/SESSION` the tasks were given to. */
  agent?: string;
  state?: StateFilter;
  /** Case-insensitive substring of the task's name, text or asker. */
  q?: string;
  /** From a previous page's `next`. */
  cursor?: string;
  limit: number;
}

export interface TaskPage {
  rows: TaskRow[];
  next?: string;
  total: number;
}

export interface Counts {
  total: number;
  open: number;
  queued: number;
  held: number;
  stalled: number;
  byState: Partial<Record<TaskState, number>>;
}

export interface ChainNode {
  key: string;
  /** The task, or undefined when the ledger no longer (or not yet) holds it. */
  row?: TaskRow;
  /** `MACHINE/SESSION:ID` of a task not in the ledger (only for such nodes). */
  name?: string;
  children: ChainNode[];
  /** Children left out to keep one tree bounded. */
  more?: number;
}

export interface Chain {
  root: ChainNode;
  size: number;
  lastAt: number;
}

/** Most nodes one chain tree carries; a wider tree says how many it left out. */
export const CHAIN_NODES_MAX = 300;
const WALK_MAX = 64;

type Pos = [number, string];

function cmp(a: Pos, b: Pos): number {
  return a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
}

export function encodeCursor(p: Pos): string {
  return Buffer.from(JSON.stringify(p)).toString('base64url');
}

export function decodeCursor(c: string): Pos | undefined {
  try {
    const p = JSON.parse(Buffer.from(c, 'base64url').toString()) as unknown;
    if (Array.isArray(p) && p.length === 2 && Number.isFinite(p[0]) && typeof p[1] === 'string') return [p[0], p[1]];
  } catch {
    /* not one of ours */
  }
  return undefined;
}

export class Board {
  private rows = new Map<string, TaskRow>();
  /** Keys ordered by (createdAt, key), oldest first. */
  private order: string[] = [];
  private children = new Map<string, Set<string>>();

  get size(): number {
    return this.rows.size;
  }

  get(key: string): TaskRow | undefined {
    return this.rows.get(key);
  }

  clear(): void {
    this.rows.clear();
    this.order = [];
    this.children.clear();
  }

  /** Takes a row in; false when the board already holds this version or a newer one. */
  upsert(row: TaskRow): boolean {
    const cur = this.rows.get(row.key);
    if (cur && cur.v >= row.v) return false;
    if (cur) {
      if (cur.createdAt !== row.createdAt) this.removeFromOrder(cur);
      if (cur.parentKey !== row.parentKey) this.unlink(cur);
    }
    this.rows.set(row.key, row);
    if (!cur || cur.createdAt !== row.createdAt) this.insertInOrder(row);
    if (row.parentKey) {
      let set = this.children.get(row.parentKey);
      if (!set) this.children.set(row.parentKey, (set = new Set()));
      set.add(row.key);
    }
    return true;
  }

  /** Drops finished tasks the ledger has kept since before `before` (ms), as the ledger does. */
  prune(before: number): number {
    const gone: TaskRow[] = [];
    for (const r of this.rows.values()) if (!r.open && keptFrom(r) < before) gone.push(r);
    if (!gone.length) return 0;
    for (const r of gone) {
      this.rows.delete(r.key);
      this.unlink(r);
    }
    this.order = this.order.filter((k) => this.rows.has(k));
    return gone.length;
  }

  page(q: TaskQuery): TaskPage {
    const limit = Math.max(1, Math.min(q.limit, 200));
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    const rows: TaskRow[] = [];
    let total = 0;
    let more = false;
    const found = q.q ? searchFor(q.q) : undefined;
    for (let i = this.order.length - 1; i >= 0; i--) {
      const key = this.order[i]!;
      const r = this.rows.get(key)!;
      if (!matches(r, q, found)) continue;
      total++;
      if (after && cmp([r.createdAt, r.key], after) >= 0) continue;
      if (rows.length < limit) rows.push(r);
      else more = true;
    }
    const last = rows[rows.length - 1];
    return { rows, total, ...(more && last ? { next: encodeCursor([last.createdAt, last.key]) } : {}) };
  }

  counts(): Counts {
    const c: Counts = { total: 0, open: 0, queued: 0, held: 0, stalled: 0, byState: {} };
    for (const r of this.rows.values()) {
      c.total++;
      c.byState[r.state] = (c.byState[r.state] ?? 0) + 1;
      if (!r.open) continue;
      c.open++;
      if (r.queued) c.queued++;
      if (r.held) c.held++;
      if (r.stalled) c.stalled++;
    }
    return c;
  }

  /** Every `MACHINE/SESSION` that holds tasks, with how many and how many are open. */
  agents(): { agent: string; total: number; open: number }[] {
    const m = new Map<string, { agent: string; total: number; open: number }>();
    for (const r of this.rows.values()) {
      let a = m.get(r.to);
      if (!a) m.set(r.to, (a = { agent: r.to, total: 0, open: 0 }));
      a.total++;
      if (r.open) a.open++;
    }
    return [...m.values()].sort((a, b) => a.agent.localeCompare(b.agent));
  }

  /** Open tasks that need the owner: stalled ones and held ones, newest first. */
  attention(limit = 200): { stalled: TaskRow[]; held: TaskRow[] } {
    const stalled: TaskRow[] = [];
    const held: TaskRow[] = [];
    for (let i = this.order.length - 1; i >= 0; i--) {
      const r = this.rows.get(this.order[i]!)!;
      if (!r.open) continue;
      if (r.stalled && stalled.length < limit) stalled.push(r);
      if (r.held && held.length < limit) held.push(r);
    }
    return { stalled, held };
  }

  /** Tasks asked from inside `key`, oldest first. */
  childrenOf(key: string): TaskRow[] {
    return [...(this.children.get(key) ?? [])]
      .map((k) => this.rows.get(k))
      .filter((r): r is TaskRow => r !== undefined)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  /** The key at the top of `key`'s chain (a task not in the board when the root is gone). */
  rootOf(key: string): string {
    let k = key;
    const seen = new Set<string>([k]);
    for (let i = 0; i < WALK_MAX; i++) {
      const p = this.rows.get(k)?.parentKey;
      if (!p || seen.has(p)) break;
      seen.add(p);
      k = p;
    }
    return k;
  }

  /** The whole tree `key` belongs to, from its root down. */
  chain(key: string): Chain | undefined {
    if (!this.rows.has(key)) return undefined;
    return this.tree(this.rootOf(key));
  }

  /** Chains of more than one task, the most recently started first. */
  chains(offset: number, limit: number): { chains: Chain[]; total: number; next?: number } {
    const roots = new Map<string, number>();
    for (const r of this.rows.values()) {
      if (!r.parentKey) continue;
      const root = this.rootOf(r.key);
      const at = this.rows.get(root)?.createdAt ?? r.createdAt;
      roots.set(root, Math.min(roots.get(root) ?? Infinity, at));
    }
    const sorted = [...roots.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const slice = sorted.slice(offset, offset + limit);
    const chains = slice.map(([root]) => this.tree(root));
    return { chains, total: sorted.length, ...(offset + limit < sorted.length ? { next: offset + limit } : {}) };
  }

  private tree(rootKey: string): Chain {
    let size = 0;
    let lastAt = 0;
    const seen = new Set<string>();
    const build = (key: string, depth: number): ChainNode => {
      seen.add(key);
      size++;
      const row = this.rows.get(key);
      if (row) lastAt = Math.max(lastAt, row.statusAt);
      const node: ChainNode = { key, ...(row ? { row } : { name: this.nameOfMissing(key) }), children: [] };
      const kids = [...(this.children.get(key) ?? [])]
        .map((k) => this.rows.get(k))
        .filter((r): r is TaskRow => r !== undefined && !seen.has(r.key))
        .sort((a, b) => a.createdAt - b.createdAt);
      for (const [i, kid] of kids.entries()) {
        if (size >= CHAIN_NODES_MAX || depth >= WALK_MAX) {
          node.more = kids.length - i;
          break;
        }
        node.children.push(build(kid.key, depth + 1));
      }
      return node;
    };
    const root = build(rootKey, 0);
    return { root, size, lastAt };
  }

  /** A child names its parent; use that name for a parent the board does not hold. */
  private nameOfMissing(key: string): string {
    for (const k of this.children.get(key) ?? []) {
      const p = this.rows.get(k)?.parent;
      if (p) return p;
    }
    return key;
  }

  private insertInOrder(r: TaskRow): void {
    const pos: Pos = [r.createdAt, r.key];
    const last = this.order[this.order.length - 1];
    if (last === undefined || cmp(this.posOf(last), pos) < 0) {
      this.order.push(r.key);
      return;
    }
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cmp(this.posOf(this.order[mid]!), pos) < 0) lo = mid + 1;
      else hi = mid;
    }
    this.order.splice(lo, 0, r.key);
  }

  private removeFromOrder(r: TaskRow): void {
    const i = this.order.indexOf(r.key);
    if (i >= 0) this.order.splice(i, 1);
  }

  private posOf(key: string): Pos {
    const r = this.rows.get(key)!;
    return [r.createdAt, r.key];
  }

  private unlink(r: TaskRow): void {
    if (!r.parentKey) return;
    const set = this.children.get(r.parentKey);
    set?.delete(r.key);
    if (set && set.size === 0) this.children.delete(r.parentKey);
  }
}
