/**
 * What the Claude Code and pi adapters share: one long-lived CLI process per session, its state as
 * the bridge sees it, and a `start()` that spawns (or resumes) once even when called concurrently.
 */
import type { JsonlChild } from './child.js';
import type { HarnessOptions, HarnessState } from './types.js';

export abstract class ProcessHarness {
  protected _state: HarnessState = 'starting';
  protected proc?: JsonlChild;
  protected _sessionId?: string;
  protected starting?: Promise<void>;

  constructor(protected readonly opts: HarnessOptions) {}

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

  protected get log() {
    return this.opts.log;
  }

  protected setState(s: HarnessState): void {
    if (s === this._state) return;
    this._state = s;
    this.opts.events.state?.(s);
  }

  start(): Promise<void> {
    if (this.proc?.alive && this._state !== 'starting') return Promise.resolve();
    this.starting ??= this.spawnAndWait().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Spawns the process (resuming the session when it ran before) and waits until it is ready. */
  protected abstract spawnAndWait(): Promise<void>;
}
