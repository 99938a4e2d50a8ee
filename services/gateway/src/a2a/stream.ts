/**
 * Task event streams (spec §4): the task first, then every later change in order, closing at a
 * terminal or interrupted state. Built on the ledger: listen first, then read, so nothing falls
 * between; a client that reconnects with SubscribeToTask gets the task as it stands and what follows.
 */
import { isInterrupted, isTerminal, type StreamResponse } from '@shrooms/protocol';
import { withClosingStatus } from '../v03/jsonrpc.js';
import { eventsFrom, type Stored } from '@shrooms/ledger';
import type { LiveTasks } from '../tasks/live.js';

export interface TaskStream {
  /** Yields stream responses until the task closes or `close()` is called. */
  events: AsyncIterable<StreamResponse>;
  close(): void;
}

/**
 * `start` runs after the listener is registered (e.g. the send itself) and returns the entry to
 * begin from; events of later entries follow. A send's stream closes where its blocking form would
 * return (terminal or interrupted); a subscription (`untilTerminal`) stays through an interruption,
 * so its subscriber sees the answer that completes the task (TCK STREAM-SUB-002).
 */
export function openTaskStream(live: LiveTasks, key: string, start: () => Promise<Stored>, untilTerminal = false): TaskStream {
  const closes = (s: Stored) => isTerminal(s.entry.task.status.state) || (!untilTerminal && isInterrupted(s.entry.task.status.state));
  const queue: Stored[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const unlisten = live.listen(key, (s) => {
    queue.push(s);
    wake?.();
  });
  const stopRefresh = live.refreshEvery(key);
  const close = () => {
    closed = true;
    stopRefresh();
    unlisten();
    wake?.();
  };
  async function* events(): AsyncGenerator<StreamResponse> {
    try {
      const first = await start();
      let v = first.entry.v;
      yield { task: first.entry.task };
      if (closes(first)) return;
      while (!closed) {
        if (queue.length === 0) {
          await new Promise<void>((r) => (wake = r));
          wake = undefined;
          continue;
        }
        const s = queue.shift()!;
        if (s.entry.v <= v) continue;
        if (eventsFrom(s.entry) !== v || s.entry.events.length === 0) {
          // Changes were coalesced before we saw them (or the entry says none): say where the task stands now.
          yield {
            statusUpdate: {
              taskId: s.entry.task.id,
              contextId: s.entry.task.contextId,
              status: s.entry.task.status,
              metadata: s.entry.task.metadata,
            },
          };
        } else {
          for (const ev of s.entry.events) if (!('task' in ev)) yield ev;
        }
        v = s.entry.v;
        if (closes(s)) return;
      }
    } finally {
      close();
    }
  }
  return { events: events(), close };
}

/** The stream a v0.3 client is sent: it ends on a `final` status update (`withClosingStatus`). */
export function v03Stream(s: TaskStream): TaskStream {
  return { events: withClosingStatus(s.events), close: s.close };
}
