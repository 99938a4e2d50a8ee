/** Following the ledger's keys as they change (Ledger.watch): decoded tasks, in order, and when the initial values are in. */
import { KvWatchInclude, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS } from '@shrooms/protocol';
import { Answers } from '@shrooms/runtime';
import type { Stored } from './entry.js';
import { decode, type StoredMessage } from './codec.js';
import { readLastValues, type LastValues } from './read-last.js';
import type { OwnWrites } from './own-writes.js';

export interface WatchTasks {
  onEntry: (s: Stored, isUpdate: boolean) => void;
  onReady?: () => void;
  onEnd?: (err?: unknown) => void;
  /**
   * `updates`: no initial values, only the changes stored from now on (ready at once). `initial`: the
   * initial values alone, a read to the end (ready once they are in; no consumer follows changes).
   */
  only?: 'updates' | 'initial';
  /** This process's own writes: told of every change by someone else (`OwnWrites.saw`). */
  own?: OwnWrites;
  /** Skip the changes `own` knows as this process's own (see Ledger.watch). */
  skipOwn?: boolean;
  /** One entry passed on (`false`) or skipped as this process's own (`true`). */
  counted: (skipped: boolean) => void;
}

/**
 * With initial values, two consumers: the changes from now on (deliver new) are subscribed to first,
 * then the last value of each key is read by a second one (read-last.ts), let go once they are in; a
 * change the first brings that the second already did (its revision at or below the last one read)
 * is skipped. One consumer delivering the last value per subject would do, but nats-server (2.9)
 * recounts such a consumer's pending messages over every subject of its filter on each message it
 * delivers once it has caught up — with one write per task that is every message, and the cost
 * grows with the ledger.
 */
export async function watchTasks(nc: NatsConnection, kv: KV, filter: string, w: WatchTasks): Promise<() => void> {
  let stopped = false;
  let ready = false;
  const markReady = () => {
    if (!ready) {
      ready = true;
      w.onReady?.();
    }
  };
  const iter = w.only === 'initial' ? undefined : await kv.watch({ key: filter, include: KvWatchInclude.UpdatesOnly });
  let first: LastValues | undefined;
  const answers = new Answers();
  const stopAll = () => {
    first?.stop();
    iter?.stop();
    answers.flush();
  };
  const own = w.own;
  const pass = (e: StoredMessage, isUpdate: boolean) => {
    own?.saw(e.key, e.revision);
    const s = decode(e);
    if (s) {
      w.counted(false);
      w.onEntry(s, isUpdate);
    }
  };
  const change = (e: StoredMessage) => {
    if (w.skipOwn && own?.isOwn(e, () => stopped || pass(e, true))) w.counted(true);
    else pass(e, true);
  };
  // The last revision the initial values brought: a change at or below it is one of them.
  let read = 0;
  try {
    if (w.only !== 'updates')
      first = await readLastValues(nc, BUCKETS.tasks, filter, (v) => {
        read = Math.max(read, v.revision);
        if (!stopped) pass(v, false);
      });
  } catch (err) {
    stopAll();
    throw err;
  }
  void (async () => {
    const complete = first ? await first.done : true;
    if (stopped) return;
    // Its consumer went away before the initial values were in: the watch ends (its owner starts it again).
    if (!complete) throw new Error(`the watch of ${filter} ended before its initial values were in`);
    markReady();
    if (!iter) return 'read';
    for await (const e of iter as AsyncIterable<KvWatchEntry>) {
      answer(answers, e);
      if (e.revision > read) change(e);
    }
  })().then(
    (end) => stopped || end === 'read' || w.onEnd?.(),
    (err: unknown) => {
      stopAll();
      if (!stopped) w.onEnd?.(err);
    },
  );
  return () => {
    stopped = true;
    stopAll();
  };
}

/**
 * Answers the reply-to subject a delivery carries (its ack subject; the consumer takes no acks, so
 * nats-server drops the answer), with the watch's next batch of answers (libs/runtime answers.ts). Our NATS users
 * may answer requests (allow_responses), and nats-server 2.9 remembers each reply-to subject it
 * delivers to such a user until it is answered or the reply window ends, walking all it remembers on
 * every delivery once it holds over 4,096: a watch reading a long history — a bridge starting on a
 * long session, the gateway learning its open tasks — then cost the server time in the square of its
 * length, and a busy one grew its CPU with the rate. An answered subject goes at the next walk. The
 * entry's message is the kv client's own field (pinned nats.js; the watch test fails if it stops
 * answering).
 */
function answer(answers: Answers, e: KvWatchEntry): void {
  const sm = (e as unknown as { sm?: { ack?: () => void } }).sm;
  if (sm?.ack) answers.add(() => sm.ack!());
}
