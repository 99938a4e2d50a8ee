/**
 * What every CLI adapter shares (Claude Code, pi, and any agent that speaks JSON Lines on stdio):
 * one long-lived process per session, its state as the bridge sees it, a `start()` that spawns (or
 * resumes) once even when called concurrently, the turn (one at a time, resolved once), correlated
 * control calls with a deadline, cancel escalation (the CLI's own interrupt, then a signal, then
 * SIGKILL and a respawn) and exit handling (every waiter told why, the bridge told of an unasked
 * exit). An adapter says how to start its CLI, how to read its stream (a zod schema), how to write
 * a turn and a call, and how to interrupt.
 */
import type { z } from 'zod';
import type { Command } from './binaries.js';
import { JsonlChild, within, type ChildExit } from './child.js';
import type { Harness, HarnessKind, HarnessOptions, HarnessState, TurnResult } from './types.js';

export const DEFAULT_CANCEL_GRACE_MS = 10_000;
/** How long a CLI may take to answer its first calls after a start (initialize, state, session load), ms. */
export const READY_TIMEOUT_MS = 60_000;
/** How long the process gets to exit on the hard-stop signal before SIGKILL. */
const HARD_STOP_GRACE_MS = 2_000;

/** One turn: our message in, its end out. `data` is the adapter's own bookkeeping for it. */
export interface Turn<X = unknown> {
  id: string;
  cancelRequested: boolean;
  /** The model's last text in this turn. */
  lastText: string;
  data: X;
  /** Settles when the turn has ended, however it ended. */
  ended: Promise<void>;
}

interface TurnSettle {
  resolve(r: TurnResult): void;
  reject(e: Error): void;
}

/** How to run the CLI: the command, its arguments, its environment, and what to log about it. */
export interface Launch {
  command: Command;
  args: string[];
  env: Record<string, string>;
  logInfo?: Record<string, unknown>;
}

/** A control call: what the CLI's protocol names it by, and its fields. */
export interface CallRequest {
  type?: string;
  subtype?: string;
  [field: string]: unknown;
}

interface Waiter<R> {
  resolve(r: R): void;
  reject(e: Error): void;
}

export abstract class CliHarness<Ev, R = unknown, X = unknown> implements Harness {
  abstract readonly kind: HarnessKind;
  protected _state: HarnessState = 'starting';
  protected proc?: JsonlChild;
  protected _sessionId?: string;
  protected starting?: Promise<void>;
  protected turn?: Turn<X>;
  /** Set while we kill and respawn the process ourselves: no `exit` event for that. */
  protected respawning = false;
  /** The process that got ready; one that never did ends in a rejected `start()`, not an `exit`. */
  private readyProc?: JsonlChild;
  private settle?: TurnSettle;
  private readonly calls = new Map<string, Waiter<R>>();
  private callSeq = 0;

  constructor(protected readonly opts: HarnessOptions) {}

  // ---- what an adapter says ----------------------------------------------------------------------

  /** The CLI's stream, one JSON value per line; a value that does not parse is logged and skipped. */
  protected abstract readonly events: z.ZodType<Ev>;
  /** Folders, session files, the command line. */
  protected abstract launch(): Promise<Launch>;
  /** The handshake once the process runs (e.g. `initialize`); throws if it does not get ready. */
  protected abstract handshake(): Promise<void>;
  protected abstract onEvent(ev: Ev): void;
  /** Writes the turn's message. */
  protected abstract writeTurn(turn: Turn<X>, text: string, proc: JsonlChild): void;
  /** Fresh bookkeeping for a new turn. */
  protected abstract turnData(): X;
  /** Writes a control call with its correlation id. */
  protected abstract writeCall(id: string, request: CallRequest, proc: JsonlChild): void;
  /** Asks the CLI to end the running turn (its interrupt); the base waits for the end. */
  protected abstract interrupt(graceMs: number): void;
  /** The signal for a CLI that did not end its turn after `interrupt`. */
  protected abstract readonly hardStopSignal: NodeJS.Signals;
  /** Adapter state to drop when the process exits (prompts, background jobs …). */
  protected exited(): void {}
  /** The state a new turn starts in (`waiting` when a prompt is still open). */
  protected turnState(): HarnessState {
    return 'busy';
  }

  // ---- the Harness interface ---------------------------------------------------------------------

  get state(): HarnessState {
    return this._state;
  }

  /** The CLI's own session id (known once started; resume uses it). */
  get sessionId(): string | undefined {
    return this._sessionId;
  }

  /** The CLI's process id while it runs. */
  get pid(): number | undefined {
    return this.proc?.alive ? this.proc.pid : undefined;
  }

  start(): Promise<void> {
    if (this.proc?.alive && this._state !== 'starting') return Promise.resolve();
    this.starting ??= this.spawnAndWait().finally(() => (this.starting = undefined));
    return this.starting;
  }

  async send(turnId: string, text: string): Promise<TurnResult> {
    if (this.starting) await this.starting;
    const proc = this.proc;
    if (!proc?.alive) throw new Error(`${this.kind} is not running`);
    if (this.turn) throw new Error(`${this.kind} is already running turn ${this.turn.id}`);
    let settle!: TurnSettle;
    const result = new Promise<TurnResult>((resolve, reject) => (settle = { resolve, reject }));
    const turn: Turn<X> = {
      id: turnId,
      cancelRequested: false,
      lastText: '',
      data: this.turnData(),
      ended: result.then(
        () => undefined,
        () => undefined,
      ),
    };
    this.turn = turn;
    this.settle = settle;
    this.setState(this.turnState());
    this.log.debug({ turnId }, `${this.kind} turn sent`);
    this.writeTurn(turn, text, proc);
    return result;
  }

  async cancel(): Promise<void> {
    const turn = this.turn;
    const proc = this.proc;
    if (!turn || !proc) return;
    turn.cancelRequested = true;
    const grace = this.opts.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS;
    this.interrupt(grace);
    if (await within(turn.ended, grace)) return;
    this.log.warn({ turnId: turn.id }, `${this.kind} did not end the turn when interrupted; restarting it`);
    this.respawning = true;
    try {
      proc.signal(this.hardStopSignal);
      if (!(await proc.waitExit(HARD_STOP_GRACE_MS))) await proc.kill();
      await turn.ended;
      await this.start();
    } catch (err) {
      // The respawn failed: the bridge hears of it as of a CLI that died on its own, and starts it
      // again until it runs (recovery.ts), rather than sitting with a dead one.
      this.opts.events.exit?.(null);
      throw err;
    } finally {
      this.respawning = false;
    }
  }

  answerPermission(id: string, _allow: boolean): void {
    this.log.info({ id }, `${this.kind} asks no permissions; nothing to answer`);
  }

  async stop(): Promise<void> {
    if (this.starting) await this.starting.catch(() => {});
    const proc = this.proc;
    if (!proc?.alive) {
      this.setState('dead');
      return;
    }
    await proc.stop();
  }

  // ---- for the adapters --------------------------------------------------------------------------

  protected get log() {
    return this.opts.log;
  }

  protected setState(s: HarnessState): void {
    if (s === this._state) return;
    this._state = s;
    this.opts.events.state?.(s);
  }

  /** Ends the turn with `r` (if it is still the running one) and goes idle. */
  protected finish(turn: Turn<X>, r: TurnResult): void {
    if (this.turn !== turn) return;
    const settle = this.settle!;
    this.turn = undefined;
    this.settle = undefined;
    this.log.debug({ turnId: turn.id, status: r.status }, `${this.kind} turn ended`);
    this.setState('idle');
    settle.resolve(r);
  }

  /** Tells the bridge each non-empty line of the model's text, and keeps it as the turn's last. */
  protected said(text: string): void {
    if (this.turn) this.turn.lastText = text;
    for (const line of text.split('\n')) if (line.trim()) this.opts.events.text?.(line.trim());
  }

  /** A control call answered by `answered(id, …)` within `timeoutMs`, else rejected. */
  protected call(request: CallRequest, timeoutMs: number): Promise<R> {
    const proc = this.proc;
    if (!proc?.alive) return Promise.reject(new Error(`${this.kind} is not running`));
    const id = `shrooms-${++this.callSeq}`;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(id);
        reject(new Error(`no answer to ${request.subtype ?? request.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.calls.set(id, {
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.writeCall(id, request, proc);
    });
  }

  /** The answer to a call; false when nobody waits for that id (e.g. an echo of our own answer). */
  protected answered(id: string, outcome: { result: R } | { error: Error }): boolean {
    const waiter = this.calls.get(id);
    if (!waiter) return false;
    this.calls.delete(id);
    if ('error' in outcome) waiter.reject(outcome.error);
    else waiter.resolve(outcome.result);
    return true;
  }

  // ---- the process -------------------------------------------------------------------------------

  private async spawnAndWait(): Promise<void> {
    this.setState('starting');
    const { command, args, env, logInfo } = await this.launch();
    this.log.info({ command: command.command, ...logInfo, cwd: this.opts.cwd }, `starting ${this.kind}`);
    const proc = new JsonlChild(command, args, {
      cwd: this.opts.cwd,
      env,
      log: this.log,
      onValue: (v) => this.receive(v),
      onExit: (e) => this.onExit(proc, e),
    });
    this.proc = proc;
    try {
      await this.handshake();
    } catch (err) {
      await proc.kill();
      const stderr = proc.stderrTail();
      throw new Error(`${this.kind} did not get ready: ${(err as Error).message}${stderr ? `; stderr: ${stderr}` : ''}`, { cause: err });
    }
    this.readyProc = proc;
    this.setState(this.turn ? 'busy' : 'idle');
  }

  private receive(value: Record<string, unknown>): void {
    const r = this.events.safeParse(value);
    if (r.success) this.onEvent(r.data);
    else this.log.debug({ type: value.type, issues: r.error.issues.slice(0, 3) }, `${this.kind} printed a line we do not read`);
  }

  private onExit(proc: JsonlChild, exit: ChildExit): void {
    if (this.proc !== proc) return;
    this.proc = undefined;
    const stderr = proc.stderrTail(500);
    const why = `${this.kind} exited (${exit.signal ?? `code ${exit.code}`})${stderr ? `: ${stderr}` : ''}`;
    // What it wrote to stderr is kept at debug while it runs; when it dies on its own, its last words
    // are what a person needs to see (a bad key, a missing model, a crash).
    if (!this.respawning && (exit.code !== 0 || exit.signal))
      this.log.warn({ code: exit.code, signal: exit.signal, stderr: proc.stderrTail(2000) }, `${this.kind} exited`);
    else this.log.info({ code: exit.code, signal: exit.signal, respawning: this.respawning }, `${this.kind} exited`);
    for (const c of this.calls.values()) c.reject(new Error(why));
    this.calls.clear();
    this.exited();
    const turn = this.turn;
    const settle = this.settle;
    this.turn = undefined;
    this.settle = undefined;
    if (turn?.cancelRequested) settle?.resolve({ status: 'cancelled', text: turn.lastText });
    else settle?.reject(new Error(why));
    this.setState('dead');
    if (!this.respawning && this.readyProc === proc) this.opts.events.exit?.(exit.code);
  }
}
