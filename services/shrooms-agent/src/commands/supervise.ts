/**
 * Keeps the parts of `up` alive. A part that exits when nobody asked it to is started again after a
 * backoff; the first part (NATS) comes first: while it is down, the others wait for it before they
 * restart (they reconnect to it by themselves if they are still running). Every exit and restart is
 * printed and written to the log. `stop()` (Ctrl-C) stops everything, the first part last, and no
 * exit after it counts as unexpected.
 */

export interface Exit {
  code: number | null;
  signal: string | null;
}

export interface RunningPart {
  pid?: number;
  /** Resolves when the part has exited, for whatever reason. */
  exited: Promise<Exit>;
  stop(): Promise<void>;
}

export interface PartSpec {
  name: string;
  /** Starts the part and resolves once it is ready; rejects when it is not. */
  start(): Promise<RunningPart>;
  /** Where the part writes its output (named in what is printed). */
  logFile?: string;
}

export interface Backoff {
  /** Wait before the first restart, ms (default 500). */
  firstMs: number;
  /** The wait doubles with each restart in a row, up to this, ms (default 30 000). */
  maxMs: number;
  /** A part that stayed up this long starts again from `firstMs` after its next exit, ms (default 60 000). */
  stableMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { firstMs: 500, maxMs: 30_000, stableMs: 60_000 };

/** The wait before restart number `n` (1-based) of a run of restarts. */
export function backoffDelay(n: number, b: Backoff = DEFAULT_BACKOFF): number {
  return Math.min(b.maxMs, b.firstMs * 2 ** Math.max(0, n - 1));
}

export interface SupervisorOptions {
  /** One line for the person at the terminal. */
  print(line: string): void;
  /** One structured entry for the log file. */
  log(entry: Record<string, unknown>): void;
  backoff?: Backoff;
}

interface Slot {
  spec: PartSpec;
  current?: RunningPart;
  startedAt: number;
  restarts: number;
  /** Restarts in a row without staying up `stableMs`. */
  streak: number;
  timer?: NodeJS.Timeout;
  restarting?: Promise<void>;
}

export class Supervisor {
  private slots: Slot[] = [];
  private stopping = false;
  /** Resolves while the first part (NATS) is up; replaced by a pending one while it is down. */
  private firstUp: Promise<void> = Promise.resolve();
  private markFirstUp: () => void = () => {};
  private firstDown = false;
  private readonly backoff: Backoff;

  constructor(private readonly o: SupervisorOptions) {
    this.backoff = o.backoff ?? DEFAULT_BACKOFF;
  }

  /** Starts a part for the first time (a failure here is the caller's: `up` gives up). */
  async add(spec: PartSpec): Promise<RunningPart> {
    const slot: Slot = { spec, startedAt: Date.now(), restarts: 0, streak: 0 };
    this.slots.push(slot);
    const part = await spec.start();
    this.watch(slot, part);
    return part;
  }

  /** How many times each part was restarted. */
  restarts(): Record<string, number> {
    return Object.fromEntries(this.slots.map((s) => [s.spec.name, s.restarts]));
  }

  private isFirst(slot: Slot): boolean {
    return this.slots[0] === slot;
  }

  private watch(slot: Slot, part: RunningPart): void {
    slot.current = part;
    slot.startedAt = Date.now();
    void part.exited.then((exit) => {
      if (this.stopping || slot.current !== part) return;
      slot.current = undefined;
      this.onExit(slot, exit);
    });
  }

  private onExit(slot: Slot, exit: Exit): void {
    const how = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
    this.scheduleRestart(slot, `exited unexpectedly (${how})`, {
      event: 'exited',
      ...exit,
      upMs: Date.now() - slot.startedAt,
    });
  }

  private scheduleRestart(slot: Slot, what: string, entry: Record<string, unknown>): void {
    const upMs = Date.now() - slot.startedAt;
    slot.streak = upMs >= this.backoff.stableMs ? 1 : slot.streak + 1;
    const delayMs = backoffDelay(slot.streak, this.backoff);
    const first = this.isFirst(slot);
    if (first && !this.firstDown) {
      this.firstDown = true;
      this.firstUp = new Promise((r) => (this.markFirstUp = r));
    }
    const where = slot.spec.logFile ? `; log: ${slot.spec.logFile}` : '';
    const line = `${slot.spec.name} ${what}; restarting in ${(delayMs / 1000).toFixed(1)} s${first && this.slots.length > 1 ? ', the others wait for it' : ''}`;
    this.o.print(`${line}${where}`);
    this.o.log({ level: 'warn', part: slot.spec.name, delayMs, ...entry, msg: line });
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      slot.restarting = this.restart(slot).finally(() => (slot.restarting = undefined));
    }, delayMs);
  }

  private async restart(slot: Slot): Promise<void> {
    if (!this.isFirst(slot) && this.firstDown) {
      const first = this.slots[0]!.spec.name;
      this.o.log({
        level: 'info',
        part: slot.spec.name,
        event: 'waiting',
        for: first,
        msg: `${slot.spec.name} waits for ${first} before restarting`,
      });
      await this.firstUp;
    }
    if (this.stopping) return;
    let part: RunningPart;
    try {
      part = await slot.spec.start();
    } catch (err) {
      if (this.stopping) return;
      const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      slot.startedAt = Date.now();
      this.scheduleRestart(slot, `did not start again (${why})`, { event: 'restart-failed', err: why });
      return;
    }
    slot.restarts++;
    if (this.stopping) {
      await part.stop();
      return;
    }
    this.watch(slot, part);
    if (this.isFirst(slot)) {
      this.firstDown = false;
      this.markFirstUp();
    }
    const back = `${slot.spec.name} is back (pid ${part.pid ?? '?'}, restart ${slot.restarts})`;
    this.o.print(back);
    this.o.log({ level: 'info', part: slot.spec.name, event: 'restarted', pid: part.pid, restarts: slot.restarts, msg: back });
  }

  /** Stops every part: the others first, in reverse order of start, then the first (NATS). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.markFirstUp(); // a restart waiting for NATS sees `stopping` and gives up
    for (const s of this.slots) if (s.timer) clearTimeout(s.timer);
    for (const s of [...this.slots].reverse()) {
      await s.restarting;
      await s.current?.stop();
    }
  }
}

/**
 * What a part that did not start said last: the last line of its output (its `msg` and error when
 * it logged JSON), or undefined when it said nothing.
 */
export function lastWords(text: string): string | undefined {
  const line = text.trimEnd().split('\n').at(-1)?.trim();
  if (!line) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: unknown; err?: { message?: unknown } };
    const msg = typeof entry.msg === 'string' ? entry.msg : undefined;
    const err = typeof entry.err?.message === 'string' ? entry.err.message : undefined;
    return [msg, err].filter(Boolean).join(': ') || line;
  } catch {
    return line;
  }
}
