/**
 * The worker's last words per task: a line the session says counts for the task its turn works on
 * (a reminder turn works on the task it reminds of), never for another. So `shrooms/last_worker_line`
 * on a task, what GetTask and the dashboard show of it and what the watchdog quotes back, is what
 * was said while working on that task — one asker never reads another's. Pure; bounded by the open
 * tasks (a line goes when its task is finished or dropped) and at most `max` keys in any case.
 */
export const LAST_LINE_CHARS = 500;

export class WorkerLines {
  private readonly lines = new Map<string, string>(); // task key → last line
  private turnKey?: string;

  constructor(private readonly max = 256) {}

  /** A turn for the task `key` starts (undefined: a turn for no task; what it says counts for none). */
  begin(key: string | undefined): void {
    this.turnKey = key;
  }

  /** The task the running turn works on. */
  get turn(): string | undefined {
    return this.turnKey;
  }

  /** The turn ended: nothing said from now on counts for its task. */
  end(): void {
    this.turnKey = undefined;
  }

  /** A line the session said: the last words of the task its turn works on. */
  said(line: string): void {
    if (this.turnKey !== undefined) this.keep(this.turnKey, line);
  }

  /** `line` as the last words of the task `key` (a turn's final text). */
  keep(key: string, line: string): void {
    this.lines.delete(key);
    this.lines.set(key, line.slice(-LAST_LINE_CHARS));
    if (this.lines.size > this.max) this.lines.delete(this.lines.keys().next().value!);
  }

  /** The last line said while working on the task `key` ('' when none). */
  of(key: string): string {
    return this.lines.get(key) ?? '';
  }

  forget(key: string): void {
    this.lines.delete(key);
  }
}
