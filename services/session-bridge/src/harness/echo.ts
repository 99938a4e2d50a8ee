/**
 * The echo harness: no model. Each task is finished with its own text, through the same
 * `task_update` path a real worker uses. For the quick start, demos, tests and load tests; it says
 * what it is. Two knobs for demos and tests, both documented: `ECHO_DELAY_MS` (in `env`) makes it a
 * slow worker that can be cancelled; a task text starting `blocked:` or `fail:` ends the task
 * blocked (asking for the rest of the line) or failed, and `quiet:` ends the turn without finishing
 * the task (a worker that stopped half done, for the watchdog) — so those paths show without a model.
 * `permission: TOOL` asks its owner for permission to run TOOL, as Claude Code does, and finishes
 * the task `allowed TOOL` or `denied TOOL` by the answer (the permission relay without a model);
 * `permission: TOOL OTHER …` asks for each at once, as tool calls run side by side do, and finishes
 * `allowed TOOL, denied OTHER, …`.
 */
import type { Part } from '@shrooms/protocol';
import type { Harness, HarnessKind, HarnessOptions, HarnessState, HarnessUpdateStatus, TurnResult } from './types.js';

export class EchoHarness implements Harness {
  readonly kind: HarnessKind = 'echo';
  state: HarnessState = 'starting';
  private cancelTurn?: () => void;
  private pending = new Map<string, (allow: boolean | undefined) => void>();
  private prompts = 0;

  constructor(protected readonly opts: HarnessOptions) {}

  async start(): Promise<void> {
    this.set('idle');
  }

  async send(_turnId: string, text: string, taskId?: string): Promise<TurnResult> {
    this.set('busy');
    try {
      const body = stripHeader(text);
      const delay = this.delayMs(text, taskId);
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
        const asked = /^permission:\s*(\S+(?:[ \t]+\S+)*)/.exec(body);
        if (asked) {
          const tools = asked[1]!.split(/\s+/);
          const answers = await Promise.all(tools.map((tool) => this.askPermission(tool)));
          if (answers.includes(undefined)) return { status: 'cancelled', text: '' };
          const said = tools.map((tool, i) => `${answers[i] ? 'allowed' : 'denied'} ${tool}`).join(', ');
          await this.opts.tools.taskUpdate(taskId, 'done', said);
          return { status: 'completed', text: body };
        }
        const d = this.directive(body, text, taskId);
        if (d.kind === 'quiet') return { status: 'completed', text: d.text };
        await this.opts.tools.taskUpdate(taskId, d.kind, d.text, d.parts);
      }
      return { status: 'completed', text: body };
    } finally {
      this.set('idle');
    }
  }

  /** How long a turn takes, ms: `ECHO_DELAY_MS` (a slow worker that can be cancelled). */
  protected delayMs(_text: string, _taskId?: string): number {
    return Number(this.opts.env.ECHO_DELAY_MS ?? 0);
  }

  /** How the task ends: a text starting `blocked:`, `fail:` or `quiet:` says so; else done with it. */
  protected directive(body: string, _text: string, _taskId?: string): Directive {
    const m = body.match(/^(blocked|fail|quiet):\s*([\s\S]*)$/);
    if (!m) return { kind: 'done', text: body };
    const kind = m[1] === 'fail' ? 'failed' : (m[1] as 'blocked' | 'quiet');
    return { kind, text: kind === 'quiet' ? (m[2] ?? '') : m[2] || m[1]! };
  }

  async cancel(): Promise<void> {
    this.cancelTurn?.();
    for (const resolve of this.pending.values()) resolve(undefined);
    this.pending.clear();
  }

  /** Waits (as `waiting`) for the owner's answer through the bridge's permission relay. */
  private askPermission(tool: string): Promise<boolean | undefined> {
    const id = `echo-permission-${++this.prompts}`;
    return new Promise<boolean | undefined>((resolve) => {
      this.pending.set(id, resolve);
      this.set('waiting');
      this.opts.events.permission?.({ id, tool, input: {} });
    }).finally(() => {
      // Waiting while any prompt is open, as the real harnesses are (prompts.ts).
      if (!this.pending.size && this.state === 'waiting') this.set('busy');
    });
  }

  answerPermission(id: string, allow: boolean): void {
    const resolve = this.pending.get(id);
    this.pending.delete(id);
    resolve?.(allow);
  }

  async stop(): Promise<void> {
    this.cancelTurn?.();
    for (const resolve of this.pending.values()) resolve(undefined);
    this.pending.clear();
    this.set('dead');
  }

  private set(s: HarnessState): void {
    this.state = s;
    this.opts.events.state?.(s);
  }
}

/** How a turn ends its task: a status (or `quiet`: not at all), its text, and parts to return beside it. */
export interface Directive {
  kind: HarnessUpdateStatus | 'quiet';
  text: string;
  parts?: Part[];
}

/** The task text without our header line and the closing instructions. */
export function stripHeader(text: string): string {
  const lines = text.split('\n');
  if (lines[0]?.startsWith('[shrooms task ')) lines.shift();
  const end = lines.findIndex((l) => l.startsWith('— When you have finished') || l.startsWith('— Continue the task'));
  return (end >= 0 ? lines.slice(0, end) : lines).join('\n').trim();
}
