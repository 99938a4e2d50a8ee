/**
 * MCP progress notifications while a tool waits for a task: one on every change of the task and one
 * every `intervalMs` in between, only when the client asked for progress (gave a progressToken).
 * Progress counts seconds waited, so it only grows; `total` is the wait.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { heldText, summarize } from '@shrooms/client';
import type { Task } from '@shrooms/protocol';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface ProgressReporter {
  update(task: Task): void;
  stop(): void;
}

export function progressReporter(extra: ToolExtra, opts: { intervalMs: number; totalSeconds: number; machine: string }): ProgressReporter {
  const token = extra._meta?.progressToken;
  if (token === undefined) return { update() {}, stop() {} };
  const started = Date.now();
  let last = 0;
  let latest: Task | undefined;
  const send = () => {
    if (!latest) return;
    const waited = Math.round((Date.now() - started) / 100) / 10;
    const progress = waited > last ? waited : Math.round((last + 0.1) * 10) / 10;
    last = progress;
    const s = summarize(latest, opts.machine);
    const state = s.held ? heldText(s) : `${s.status}${s.note ? ` (${s.note})` : ''}`;
    const message = `${s.task} is ${state} — waited ${Math.floor(waited)} s of ${opts.totalSeconds} s`;
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: opts.totalSeconds, message } })
      .catch(() => {});
  };
  const timer = setInterval(send, Math.max(50, opts.intervalMs));
  timer.unref();
  return {
    update(task) {
      latest = task;
      send();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
