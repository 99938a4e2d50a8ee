/**
 * The session's queue: tasks waiting for the session, answers to blocked tasks ahead of new ones,
 * each group in the order asked. Held tasks wait apart until their owner releases them.
 */
export interface Queued {
  key: string;
  taskId: string;
  answer: boolean;
  askedAt: number;
}

export class TaskQueue {
  private items: Queued[] = [];

  get length(): number {
    return this.items.length;
  }

  has(key: string): boolean {
    return this.items.some((q) => q.key === key);
  }

  add(q: Queued): void {
    if (this.has(q.key)) return;
    this.items.push(q);
    this.items.sort((a, b) => Number(b.answer) - Number(a.answer) || a.askedAt - b.askedAt);
  }

  remove(key: string): boolean {
    const n = this.items.length;
    this.items = this.items.filter((q) => q.key !== key);
    return this.items.length !== n;
  }

  shift(): Queued | undefined {
    return this.items.shift();
  }

  list(): readonly Queued[] {
    return this.items;
  }
}
