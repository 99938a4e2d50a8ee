/**
 * The session's queue: tasks waiting for the session, answers to blocked tasks ahead of new ones,
 * each group in the order asked. Held tasks wait apart until their owner releases them.
 *
 * Kept in order as tasks are added (a new task nearly always goes last: it was asked last), with its
 * keys in a set: adding, looking up and taking the next cost the same with a thousand tasks waiting
 * as with one.
 */
export interface Queued {
  key: string;
  taskId: string;
  answer: boolean;
  askedAt: number;
}

/** Whether `a` goes before `b`: answers first, then the order asked. */
const before = (a: Queued, b: Queued) => (a.answer !== b.answer ? a.answer : a.askedAt < b.askedAt);

export class TaskQueue {
  private items: Queued[] = [];
  private keys = new Set<string>();

  get length(): number {
    return this.items.length;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(q: Queued): void {
    if (this.keys.has(q.key)) return;
    this.keys.add(q.key);
    // After every task it does not go before (equals keep the order they came in).
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(q, this.items[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    if (lo === this.items.length) this.items.push(q);
    else this.items.splice(lo, 0, q);
  }

  remove(key: string): boolean {
    if (!this.keys.delete(key)) return false;
    this.items.splice(
      this.items.findIndex((q) => q.key === key),
      1,
    );
    return true;
  }

  shift(): Queued | undefined {
    const q = this.items.shift();
    if (q) this.keys.delete(q.key);
    return q;
  }

  list(): readonly Queued[] {
    return this.items;
  }
}
