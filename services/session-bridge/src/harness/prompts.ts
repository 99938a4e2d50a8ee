/**
 * The permission prompts a harness has relayed (`events.permission`) and that are not answered
 * yet, by their id: while any is open the session is `waiting`; when the last is answered or
 * withdrawn, the turn works on (`busy`). What claude.ts and acp.ts keep alike; what each keeps of a
 * prompt (`P`) is theirs.
 */
import type { Logger } from '@shrooms/runtime';
import type { HarnessState } from './types.js';

export class OpenPrompts<P> {
  private readonly open = new Map<string, P>();

  constructor(
    private readonly state: { get(): HarnessState; set(s: HarnessState): void },
    private readonly log: () => Logger,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** The state a turn is in while it runs: `waiting` on an open prompt, else `busy`. */
  turnState(): HarnessState {
    return this.open.size ? 'waiting' : 'busy';
  }

  /** A prompt relayed to the person: the session waits on it. */
  add(id: string, prompt: P): void {
    this.open.set(id, prompt);
    this.state.set('waiting');
  }

  /** The open prompt `id`; undefined, said in the log, when it was answered or withdrawn already. */
  get(id: string): P | undefined {
    const p = this.open.get(id);
    if (!p) this.log().info({ id }, 'no such permission prompt (answered or withdrawn)');
    return p;
  }

  /** Answered or withdrawn; false when it was not open. The last one closed lets the turn work on. */
  close(id: string): boolean {
    if (!this.open.delete(id)) return false;
    if (!this.open.size && this.state.get() === 'waiting') this.state.set('busy');
    return true;
  }

  /** Every open prompt (to answer them all, as a cancel does). */
  entries(): [string, P][] {
    return [...this.open];
  }

  /** The turn ended or the process went: nothing is open any more (no state change). */
  clear(): void {
    this.open.clear();
  }
}
