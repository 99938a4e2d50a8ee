/**
 * The echo harness: no model. Each task is finished at once with its own text, through the same
 * `task_update` path a real worker uses. For the quick start, demos and load tests; it says what it is.
 */
import type { Harness, HarnessOptions, HarnessState, TurnResult } from './types.js';

export class EchoHarness implements Harness {
  readonly kind = 'echo' as const;
  state: HarnessState = 'starting';

  constructor(private readonly opts: HarnessOptions) {}

  async start(): Promise<void> {
    this.set('idle');
  }

  async send(_turnId: string, text: string, taskId?: string): Promise<TurnResult> {
    this.set('busy');
    try {
      const body = stripHeader(text);
      this.opts.events.text?.(body);
      if (taskId) await this.opts.tools.taskUpdate(taskId, 'done', body);
      return { status: 'completed', text: body };
    } finally {
      this.set('idle');
    }
  }

  async cancel(): Promise<void> {}

  answerPermission(): void {}

  async stop(): Promise<void> {
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
  const end = lines.findIndex((l) => l.startsWith('— When you have finished'));
  return (end >= 0 ? lines.slice(0, end) : lines).join('\n').trim();
}
