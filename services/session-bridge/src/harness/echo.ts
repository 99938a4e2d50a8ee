/**
 * The echo harness: no model. Each task is finished with its own text, through the same
 * `task_update` path a real worker uses. For the quick start, demos, tests and load tests; it says
 * what it is. Two knobs for demos and tests, both documented: `ECHO_DELAY_MS` (in `env`) makes it a
 * slow worker that can be cancelled; a task text starting `blocked:` or `fail:` ends the task
 * blocked (asking for the rest of the line) or failed, and `quiet:` ends the turn without finishing
 * the task (a worker that stopped half done, for the watchdog) — so those paths show without a model.
 */
import type { Harness, HarnessOptions, HarnessState, TurnResult } from './types.js';

export class EchoHarness implements Harness {
  readonly kind = 'echo' as const;
  state: HarnessState = 'starting';
  private cancelTurn?: () => void;

  constructor(private readonly opts: HarnessOptions) {}

  async start(): Promise<void> {
    this.set('idle');
  }

  async send(_turnId: string, text: string, taskId?: string): Promise<TurnResult> {
    this.set('busy');
    try {
      const body = stripHeader(text);
      const delay = Number(this.opts.env.ECHO_DELAY_MS ?? 0);
      if (delay > 0) {
        const cancelled = await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => resolve(false), delay);
          this.cancelTurn = () => {
            clearTimeout(t);
            resolve(true);
          };
        });
        this.cancelTurn = undefined;
        if (cancelled) return { status: 'cancelled', text: '' };
      }
      this.opts.events.text?.(body);
      if (taskId) {
        const m = body.match(/^(blocked|fail|quiet):\s*([\s\S]*)$/);
        if (m?.[1] === 'quiet') return { status: 'completed', text: m[2] ?? '' };
        if (m) await this.opts.tools.taskUpdate(taskId, m[1] === 'fail' ? 'failed' : 'blocked', m[2] || m[1]!);
        else await this.opts.tools.taskUpdate(taskId, 'done', body);
      }
      return { status: 'completed', text: body };
    } finally {
      this.set('idle');
    }
  }

  async cancel(): Promise<void> {
    this.cancelTurn?.();
  }

  answerPermission(): void {}

  async stop(): Promise<void> {
    this.cancelTurn?.();
    this.set('dead');
  }

  private set(s: HarnessState): void {
    this.state = s;
    this.opts.events.state?.(s);
  }
}

/** The task text without our header line and the closing instructions. */
export function stripHeader(text: string): string {
  const lines = text.split('\n');
  if (lines[0]?.startsWith('[shrooms task ')) lines.shift();
  const end = lines.findIndex((l) => l.startsWith('— When you have finished') || l.startsWith('— Continue the task'));
  return (end >= 0 ? lines.slice(0, end) : lines).join('\n').trim();
}
