/**
 * Changes a process lets wait a moment before they are written (Ledger.deferTransition): each is
 * written together with the key's next change when that comes within the wait — one write for
 * both, with the events of both — or on its own when the wait ends. For a change whose moment
 * matters little next to the one that follows it quickly: a task started (WORKING) that a quick
 * worker finishes milliseconds later is stored once, finished, with its start among its events.
 */
import type { LedgerEntry } from './entry.js';

export type Change = (current: LedgerEntry) => LedgerEntry | null;

interface Waiting {
  change: Change;
  timer: NodeJS.Timeout;
  /** The change was refused when it was applied at last (e.g. the task finished meanwhile). */
  onError: (err: unknown) => void;
}

export class DeferredChanges {
  private readonly waiting = new Map<string, Waiting>();

  /** Holds `change` of `key` for `ms`, then calls `due` (which writes it: `take` gives it). Replaces one held. */
  hold(key: string, change: Change, ms: number, due: (key: string) => void, onError: (err: unknown) => void): void {
    this.take(key);
    const timer = setTimeout(() => due(key), ms);
    timer.unref();
    this.waiting.set(key, { change, timer, onError });
  }

  has(key: string): boolean {
    return this.waiting.has(key);
  }

  keys(): string[] {
    return [...this.waiting.keys()];
  }

  /**
   * The held change of `key`, no longer held, folded into `then` (the key's next change, if any):
   * the result applies the held change, then `then`, and carries the events of both. A held change
   * that is refused is said to its `onError` (once) and left out; `then` still applies.
   */
  take(key: string, then?: Change): Change | undefined {
    const w = this.waiting.get(key);
    if (!w) return then;
    this.waiting.delete(key);
    clearTimeout(w.timer);
    let said = false;
    return (e) => {
      let first: LedgerEntry | null = null;
      try {
        first = w.change(e);
      } catch (err) {
        if (!said) w.onError(err);
        said = true;
      }
      if (!then) return first;
      const second = then(first ?? e);
      if (!second) return first;
      return first ? { ...second, events: [...first.events, ...second.events] } : second;
    };
  }
}
