/**
 * One span per task's life (spec §10): begun when the bridge takes the task (a child of the
 * delivery, itself a child of the asker's request), its state changes recorded as events as the
 * ledger shows them, ended at a terminal state — at the time the task's status carries, not when
 * this bridge's watch happens to bring it, so an asker's span never ends before the span of the task
 * it waited for. The task's metadata carries this span's context (`shrooms/traceparent`), so
 * reminders and the worker's own asks become its children.
 */
import { META, isTerminal, type Task } from '@shrooms/protocol';
import type { Stored } from '@shrooms/ledger';
import { SpanKind, SpanStatusCode, contextFromTraceparent, contextWithSpan, startSpan, traceparentOf, type Span } from '@shrooms/runtime';

export class TaskSpans {
  private spans = new Map<string, { span: Span; startedAt: number; state?: string }>();
  /** Spans begun for a delivery whose create has not yet said whether the task is new. */
  private pending = new Map<string, { span: Span; startedAt: number; traceparent?: string }>();

  constructor(readonly harness: string) {}

  /**
   * Starts the span of a task about to be created; returns the traceparent to store with it. The
   * span is the task's once `taken` (the create stored it) and is ended by `discard` (a resend).
   */
  begin(key: string, attrs: { taskId: string; session: string; device: string; from?: string; depth?: number }): string | undefined {
    const span = startSpan('task', {
      kind: SpanKind.CONSUMER,
      attributes: {
        'shrooms.task_id': attrs.taskId,
        'shrooms.session': attrs.session,
        'shrooms.device': attrs.device,
        'shrooms.depth': attrs.depth ?? 0,
        'shrooms.harness': this.harness,
        ...(attrs.from ? { 'shrooms.from': attrs.from } : {}),
      },
    });
    const traceparent = traceparentOf(contextWithSpan(span));
    this.pending.set(key, { span, startedAt: Date.now(), traceparent });
    return traceparent;
  }

  /** The create stored the task: the span begun for it is the task's. */
  taken(key: string): void {
    const p = this.pending.get(key);
    if (!p) return; // adopted already, by `observe` of the create
    this.pending.delete(key);
    this.spans.set(key, { span: p.span, startedAt: p.startedAt });
  }

  /** The task already existed (a resend): its span was begun by the first delivery. */
  discard(key: string): void {
    const p = this.pending.get(key);
    if (!p) return;
    p.span.updateName('task resend');
    p.span.end();
    this.pending.delete(key);
  }

  /** Follows a ledger entry of the session: an event per state change, the end at a terminal state. */
  observe(s: Stored): void {
    const task = s.entry.task;
    let cur = this.spans.get(s.key);
    const p = cur ? undefined : this.pending.get(s.key);
    if (p && task.metadata?.[META.traceparent] === p.traceparent) {
      // The watch brought the create before the intake said it was stored.
      this.pending.delete(s.key);
      this.spans.set(s.key, (cur = { span: p.span, startedAt: p.startedAt }));
    }
    if (!cur) {
      if (isTerminal(task.status.state)) return;
      // A task taken up after a restart or queued by the gateway: continue its stored context.
      const span = startSpan(
        'task',
        { kind: SpanKind.CONSUMER, attributes: attributesOf(task, this.harness) },
        contextFromTraceparent(task.metadata?.[META.traceparent]),
      );
      cur = { span, startedAt: Date.now() };
      this.spans.set(s.key, cur);
    }
    if (cur.state !== task.status.state) {
      cur.state = task.status.state;
      cur.span.addEvent(task.status.state, { 'shrooms.v': s.entry.v });
    }
    if (isTerminal(task.status.state)) {
      if (task.status.state === 'TASK_STATE_FAILED') cur.span.setStatus({ code: SpanStatusCode.ERROR, message: 'task failed' });
      cur.span.end(endTime(task, cur.startedAt));
      this.spans.delete(s.key);
    }
  }

  endAll(): void {
    for (const { span } of [...this.spans.values(), ...this.pending.values()]) span.end();
    this.spans.clear();
    this.pending.clear();
  }
}

/** When the task ended, as its status says (never before its span began; now when unreadable). */
function endTime(task: Task, startedAt: number): number {
  const at = Date.parse(task.status.timestamp ?? '');
  return Number.isFinite(at) ? Math.max(at, startedAt) : Date.now();
}

function attributesOf(task: Task, harness: string) {
  const md = task.metadata ?? {};
  return {
    'shrooms.task_id': task.id,
    'shrooms.session': String(md[META.session] ?? ''),
    'shrooms.device': String(md[META.device] ?? ''),
    'shrooms.depth': Number(md[META.depth] ?? 0),
    'shrooms.harness': harness,
    ...(md[META.from] ? { 'shrooms.from': String(md[META.from]) } : {}),
  };
}
