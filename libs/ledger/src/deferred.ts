/**
 * What a process lets wait a moment before it is written (Ledger.deferCreate, deferTransition):
 * written together with the key's next change when that comes within the wait — one write, with
 * the events of all — or on its own when the wait ends. For a write whose moment matters little
 * next to the one that follows it quickly: a task started (WORKING) that a quick worker finishes
 * milliseconds later is stored once, finished, with its start among its events; a task whose
 * sender waits for its end (and is told nothing before) can be created with it too.
 */
import { withFields } from '@shrooms/protocol';
import { merged, type LedgerEntry } from './entry.js';

export type Change = (current: LedgerEntry) => LedgerEntry | null;

/**
 * What is held for a key: `create`, the first entry of a key not in the ledger yet (every change
 * held since applied, the events of all); or `change`, applied to the stored entry when written.
 */
export type Held = ({ create: LedgerEntry } | { change: Change }) & {
  /** Told when what is held is refused as it is written at last, or its write fails. */
  onError: (err: unknown) => void;
  /** How long it waited (a held create put back after a failed write waits longer each time). */
  waited?: number;
};

interface Waiting {
  held: Held;
  /** The key as this process sees it, with what is held. */
  seen: LedgerEntry;
  timer: NodeJS.Timeout;
}

/** The longest a held create waits before it is tried again after a failed write. */
const RETRY_MAX_MS = 5_000;

export class DeferredChanges {
  private readonly waiting = new Map<string, Waiting>();
  /** Held creates being written: until the write ends the key is in the ledger for nobody, this process included. */
  private readonly writing = new Map<string, Promise<unknown>>();

  /**
   * Holds a create of `key` (`{ create }`, `seen` the same entry) or a change of it (`seen` what it
   * makes of the entry this process knows) for `ms`, then calls `due` (which writes it: `take`
   * gives it). A second hold of a key adds to the first and keeps its due time and `onError`.
   */
  hold(key: string, what: Held, seen: LedgerEntry, ms: number, due: (key: string) => void): void {
    const w = this.waiting.get(key);
    if (w) {
      w.held = 'create' in w.held ? { ...w.held, create: seen } : { ...w.held, change: compose(w.held, what) };
      w.seen = seen;
      return;
    }
    this.waiting.set(key, { held: withFields(what, { waited: ms }), seen, timer: arm(key, ms, due) });
  }

  has(key: string): boolean {
    return this.waiting.has(key);
  }

  /** `write` is the write of a held create of `key` (taken): `settled` waits for it. */
  writes<T>(key: string, write: Promise<T>): Promise<T> {
    this.writing.set(key, write);
    const done = () => {
      if (this.writing.get(key) === write) this.writing.delete(key);
    };
    write.then(done, done);
    return write;
  }

  /** Resolves once no held create of `key` is being written (at once when none is: the usual case). */
  settled(key: string): Promise<unknown> | undefined {
    return this.writing.get(key)?.catch(() => {});
  }

  /** The key as this process sees it with what it holds; undefined when nothing is held. */
  seen(key: string): LedgerEntry | undefined {
    return this.waiting.get(key)?.seen;
  }

  keys(): string[] {
    return [...this.waiting.keys()];
  }

  /** What is held for `key`, no longer held. */
  take(key: string): Held | undefined {
    const w = this.waiting.get(key);
    if (!w) return undefined;
    this.waiting.delete(key);
    clearTimeout(w.timer);
    return w.held;
  }

  /**
   * What was taken and could not be written (a held create: the key must not be lost), held again
   * unless something was held meanwhile: due after twice its last wait, at most RETRY_MAX_MS.
   */
  putBack(key: string, held: Held, due: (key: string) => void): void {
    if (this.waiting.has(key) || !('create' in held)) return;
    const ms = Math.min((held.waited ?? 0) * 2 || 100, RETRY_MAX_MS);
    this.waiting.set(key, { held: withFields(held, { waited: ms }), seen: held.create, timer: arm(key, ms, due) });
  }
}

function arm(key: string, ms: number, due: (key: string) => void): NodeJS.Timeout {
  const timer = setTimeout(() => due(key), ms);
  timer.unref();
  return timer;
}

/**
 * A held change folded into `then` (the key's next change, if any): the result applies the held
 * change, then `then`, and carries the events of both. A held change that is refused is said to its
 * `onError` (once) and left out; `then` still applies.
 */
export function compose(held: { change: Change; onError: (err: unknown) => void }, then?: Change | Held): Change {
  const second = then === undefined ? undefined : typeof then === 'function' ? then : 'change' in then ? then.change : undefined;
  let said = false;
  return (e) => {
    let first: LedgerEntry | null = null;
    try {
      first = held.change(e);
    } catch (err) {
      if (!said) held.onError(err);
      said = true;
    }
    if (!second) return first;
    const after = second(first ?? e);
    if (!after) return first;
    return first ? merged(first, after) : after;
  };
}

/** `then` applied to an entry held for creation: the entry to create, with the events of both. */
export function onCreate(create: LedgerEntry, then?: Change): LedgerEntry {
  const after = then?.(create);
  return after ? merged(create, after) : create;
}
