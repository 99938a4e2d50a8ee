/**
 * MCP progress notifications while a tool waits for a task: one on every change of the task and one
 * every `intervalMs` in between, only when the client asked for progress (gave a progressToken).
 * Progress counts seconds waited, so it only grows; `total` is the wait. A queued task's message says
 * what it waits for (the task its worker is on, no bridge at all), as `a2a send --wait` does.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { heldText, summarize, type TaskSummary, watchQueued } from '@shrooms/client';
import type { Task } from '@shrooms/protocol';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface ProgressReporter {
  update(task: Task): void;
  stop(): void;
}

export interface ProgressReporterOptions {
  intervalMs: number;
  totalSeconds: number;
  machine: string;
  /** What a queued task waits for (`ShroomsClient.explain`); never rejects. */
  explain?: (s: TaskSummary) => Promise<TaskSummary>;
}

export function progressReporter(extra: ToolExtra, opts: ProgressReporterOptions): ProgressReporter {
  const token = extra._meta?.progressToken;
  if (token === undefined) return { update() {}, stop() {} };
  const started = Date.now();
  let last = 0;
  let latest: Task | undefined;
  // What the task, while queued, waits for: read after each change and on each tick, used by the
  // next notification (sent in order, each one's progress above the last) until it is not queued.
  let why: string | undefined;
  const send = () => {
    if (!latest) return;
    const waited = Math.round((Date.now() - started) / 100) / 10;
    const progress = waited > last ? waited : Math.round((last + 0.1) * 10) / 10;
    last = progress;
    const s = summarize(latest, opts.machine);
    if (s.status !== 'queued') why = undefined;
    const note = s.note ?? why;
    const state = s.held ? heldText(s) : `${s.status}${note ? ` (${note})` : ''}`;
    const message = `${s.task} is ${state} — waited ${Math.floor(waited)} s of ${opts.totalSeconds} s`;
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: opts.totalSeconds, message } })
      .catch(() => {});
  };
  const interval = Math.max(50, opts.intervalMs);
  const queued = opts.explain
    ? watchQueued(opts.explain, interval, (e) => {
        if (!e.note || e.note === why) return;
        why = e.note;
        send();
      })
    : undefined;
  const timer = setInterval(send, interval);
  timer.unref();
  return {
    update(task) {
      latest = task;
      send();
      queued?.update(summarize(task, opts.machine));
    },
    stop() {
      clearInterval(timer);
      queued?.stop();
      latest = undefined;
    },
  };
}
