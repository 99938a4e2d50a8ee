/**
 * Reads a scheduled task's state from the ledger (KV `shrooms_tasks`), to send its result back to
 * the schedule's `replyTo` once the worker has finished it. Read-only: the scheduler never writes
 * the ledger; the result goes back as an ordinary task through the gateway.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, isTerminal, keys, textOf, type Task, type TaskState } from '@shrooms/protocol';

export interface TaskOutcome {
  state: TaskState;
  finished: boolean;
  /** The worker's closing words (its summary, what it needs, or why it failed). */
  text: string;
}

/** null: no such task in the ledger (expired and dropped, or never admitted). */
export type ReadTask = (machine: string, session: string, messageId: string) => Promise<TaskOutcome | null>;

export function ledgerReader(nc: NatsConnection): ReadTask {
  let kv: KV | null = null;
  return async function readTask(machine, session, messageId) {
    kv ??= await new Kvm(nc).open(BUCKETS.tasks);
    const e = await kv.get(keys.task(machine, session, messageId));
    if (!e || e.operation !== 'PUT' || e.value.length === 0) return null;
    const task = e.json<{ task: Task }>().task;
    const state = task.status.state;
    return {
      state,
      finished: isTerminal(state),
      text: textOf(task.status.message) || task.artifacts?.map((a) => textOf(a)).join('\n') || '',
    };
  };
}
