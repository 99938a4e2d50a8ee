/**
 * Reading the ledger straight from KV `shrooms_tasks` (not through the gateway), and judging the
 * tasks a chaos load acknowledged: still there, in a correct state, one task per message id, none
 * open past its deadline.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, META, isTerminal, keys, textOf, type Task } from '@shrooms/protocol';
import { keysNow } from '@shrooms/runtime';
import type { AskRecord } from '@shrooms/testing';

export interface LedgerView {
  kv: KV;
  get(machine: string, session: string, messageId: string): Promise<Task | undefined>;
  /** Every task of the machine (key → task). */
  all(machine: string): Promise<Map<string, Task>>;
}

export async function openLedger(nc: NatsConnection): Promise<LedgerView> {
  const kv = await new Kvm(nc).open(BUCKETS.tasks);
  const decode = (e: Awaited<ReturnType<KV['get']>>) =>
    e && e.operation === 'PUT' && e.value.length ? e.json<{ task: Task }>().task : undefined;
  return {
    kv,
    async get(machine, session, messageId) {
      return decode(await kv.get(keys.task(machine, session, messageId)));
    },
    async all(machine) {
      const out = new Map<string, Task>();
      // A snapshot of the keys: kv.keys() follows the load's writes and can take long to end.
      for (const k of await keysNow(nc, BUCKETS.tasks, keys.tasksOfMachine(machine))) {
        const t = decode(await kv.get(k));
        if (t) out.set(k, t);
      }
      return out;
    },
  };
}

/** Why a finished task ended as it did: the three endings a chaos run may see. */
export type Ending = 'completed' | 'expired' | 'failed-after-redelivery';

/** The state an acknowledged echo task may correctly be in once it is finished, or why not. */
export function judgeEnding(task: Task, text: string): { ending?: Ending; wrong?: string } {
  const s = task.status.state;
  if (s === 'TASK_STATE_COMPLETED') {
    const out = textOf(task.artifacts?.[0]);
    return out === text ? { ending: 'completed' } : { wrong: `completed with ${JSON.stringify(out.slice(0, 60))} instead of the echo` };
  }
  if (s === 'TASK_STATE_CANCELED' && task.metadata?.[META.expired]) return { ending: 'expired' };
  if (s === 'TASK_STATE_FAILED' && /stopped \d+ times while working/.test(textOf(task.status.message)))
    return { ending: 'failed-after-redelivery' };
  return { wrong: `${s}${task.status.message ? ` (${textOf(task.status.message).slice(0, 80)})` : ''}` };
}

export interface AckedVerdict {
  acknowledged: number;
  /** Acknowledged but missing from the ledger, or finished in a wrong state. */
  lost: number;
  /** Still open past its deadline. */
  stuck: number;
  endings: Record<string, number>;
  /** The message id appears more than once among the task's user messages (a retry doubled it). */
  doubled: number;
  /**
   * Finished by expiry although a fast worker finishes every one at once (`fastWorker`): the
   * worker's result was never stored. Counted apart from `lost`.
   */
  resultLost: number;
  problems: string[];
}

/** The note a chaos row carries when some results were never stored. */
export const resultLostNote = (v: AckedVerdict) =>
  v.resultLost ? `${v.resultLost} finished by expiry: the worker's result was never stored` : undefined;

/**
 * Waits (bounded by `untilMs`) for every acknowledged ask to finish, then judges each. A task
 * still open at `untilMs` is stuck when its deadline (asked + `expiryMs` + `graceMs`) has passed.
 */
export async function judgeAcked(
  ledger: LedgerView,
  machine: string,
  records: AskRecord[],
  o: { untilMs: number; expiryMs: number; graceMs: number; fastWorker?: boolean },
): Promise<AckedVerdict> {
  const acked = records.filter((r) => r.taskId);
  const v: AckedVerdict = { acknowledged: acked.length, lost: 0, stuck: 0, endings: {}, doubled: 0, resultLost: 0, problems: [] };
  let pending = acked;
  const latest = new Map<AskRecord, Task | undefined>();
  for (;;) {
    for (const r of pending) latest.set(r, await ledger.get(machine, r.session, r.messageId));
    pending = pending.filter((r) => {
      const t = latest.get(r);
      return t !== undefined && !isTerminal(t.status.state);
    });
    if (pending.length === 0 || Date.now() >= o.untilMs) break;
    await new Promise((res) => setTimeout(res, 250));
  }
  for (const r of acked) {
    const t = latest.get(r);
    if (!t) {
      v.lost++;
      v.problems.push(`${r.taskId}: not in the ledger`);
      continue;
    }
    if (t.id !== r.taskId) v.problems.push(`${r.messageId}: ledger task ${t.id} is not ${r.taskId}`);
    if (r.contextId && t.contextId !== r.contextId) {
      v.lost++;
      v.problems.push(`${r.taskId}: context ${t.contextId} is not the acknowledged ${r.contextId} (a second task?)`);
      continue;
    }
    const mine = (t.history ?? []).filter((m) => m.role === 'ROLE_USER' && m.messageId === r.messageId).length;
    if (mine > 1) {
      v.doubled++;
      v.problems.push(`${r.taskId}: its message is ${mine} times in the history`);
    }
    if (!isTerminal(t.status.state)) {
      const asked = Date.parse(String(t.metadata?.[META.createdAt] ?? '')) || r.ackedAt!;
      if (Date.now() > asked + o.expiryMs + o.graceMs) {
        v.stuck++;
        v.problems.push(`${r.taskId}: still ${t.status.state} past its deadline`);
      } else {
        v.problems.push(`${r.taskId}: still ${t.status.state} (deadline not reached)`);
      }
      continue;
    }
    const j = judgeEnding(t, r.text);
    if (j.wrong) {
      v.lost++;
      v.problems.push(`${r.taskId}: ${j.wrong}`);
    } else v.endings[j.ending!] = (v.endings[j.ending!] ?? 0) + 1;
    if (o.fastWorker && j.ending === 'expired') {
      v.resultLost++;
      v.problems.push(`${r.taskId}: finished by expiry, its result never stored`);
    }
  }
  return v;
}

/** Open tasks of the machine whose deadline (asked + expiry + grace) has passed. */
export async function openPastDeadline(ledger: LedgerView, machine: string, expiryMs: number, graceMs: number): Promise<string[]> {
  const out: string[] = [];
  const now = Date.now();
  for (const [key, t] of await ledger.all(machine)) {
    if (isTerminal(t.status.state)) continue;
    const asked = Date.parse(String(t.metadata?.[META.createdAt] ?? ''));
    if (Number.isFinite(asked) && now > asked + expiryMs + graceMs) out.push(`${key} ${t.status.state}`);
  }
  return out;
}
