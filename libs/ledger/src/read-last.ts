/**
 * The last value of each key under a filter, read once to its end (the initial values of a watch).
 *
 * A consumer of its own rather than the kv client's ordered one, for two reasons. It is let go when
 * the read ends (an ordered consumer stays on the server for five minutes), and it waits for each
 * delivery's answer before it sends more than READ_AHEAD ahead. nats-server 2.9 remembers the
 * reply-to subject of every message it delivers to a user allowed to answer requests (ours are:
 * deploy/nats) until it is answered, and walks all it remembers at each delivery once it holds over
 * 4,096 (libs/ledger/src/watch.ts, `answer`). An ordered consumer pushes up to megabytes ahead of its
 * reader — tens of thousands of small tasks — so a long read was walked at every message (a bridge
 * starting on 100,000 tasks: three times as long as for a user with no permissions). Here the answer
 * is the ack that lets the next one go, so the server never holds more than READ_AHEAD unanswered.
 *
 * The consumer delivers every message under the filter, not the last per subject: the ledger's
 * buckets keep one value per key (history 1, Ledger.open), so the two are the same messages, and
 * nats-server 2.9.10 loses some of a last-per-subject consumer's messages when it waits for acks
 * (seen: 7 of 3,000 never delivered, the consumer still counting them pending).
 */
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { createInbox, nanos, nuid, type NatsConnection } from '@nats-io/nats-core';
import type { StoredMessage } from './codec.js';

/** Deliveries the server sends before their answers: far under 4,096, enough to keep the reader busy. */
export const READ_AHEAD = 1_000;
/** Idle heartbeats while reading: two missed and the read ends (its owner starts it again). */
const HEARTBEAT_MS = 2_000;
/** How long the server keeps the consumer once nobody reads it: it goes soon after the read ends. */
const LET_GO_MS = 5_000;

export interface LastValues {
  /** The reading consumer's name. */
  consumer: string;
  /** How many values the read brings before it is caught up (0: none, the read is over). */
  count: number;
  /**
   * True once the value that ends the read was passed on — the `count`th, or an earlier one when
   * keys were changed meanwhile (a value replaced since the read began is not delivered) — false
   * when the read ended before it (stopped, or its consumer went away).
   */
  done: Promise<boolean>;
  stop(): void;
}

/**
 * Reads the last value of each key of `bucket` under `filter` (a key pattern), passing each to
 * `onValue` in stream order as it comes. Nothing is passed twice: a redelivery (the reader took longer
 * than the ack wait) is skipped. The messages are taken by callback, not iterated: a stop then takes
 * effect at once, where an iterator would leave the subscription (and the consumer, and what it goes
 * on delivering) behind until someone read past it.
 */
export async function readLastValues(
  nc: NatsConnection,
  bucket: string,
  filter: string,
  onValue: (v: StoredMessage) => void,
): Promise<LastValues> {
  const stream = `KV_${bucket}`;
  const prefix = `$KV.${bucket}.`;
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const info = await jsm.consumers.add(stream, {
    name: `ledger_read_${nuid.next()}`,
    deliver_subject: createInbox(inboxPrefixOf(nc)),
    filter_subject: `${prefix}${filter}`,
    deliver_policy: DeliverPolicy.All,
    ack_policy: AckPolicy.Explicit,
    max_ack_pending: READ_AHEAD,
    ack_wait: nanos(60_000),
    idle_heartbeat: nanos(HEARTBEAT_MS),
    inactive_threshold: nanos(LET_GO_MS),
    mem_storage: true,
  });
  const count = info.num_pending;
  // Nothing to read: the consumer, never subscribed to, goes by itself.
  if (count === 0) return { consumer: info.name, count, done: Promise.resolve(true), stop: () => {} };
  let finished = false;
  let settle!: (complete: boolean) => void;
  const done = new Promise<boolean>((r) => (settle = r));
  const end = (complete: boolean) => {
    if (finished) return;
    finished = true;
    settle(complete);
  };
  let i = 0;
  const consumer = await jetstream(nc).consumers.getPushConsumer(stream, info.name);
  const messages = await consumer.consume({
    abort_on_missing_resource: true,
    callback: (m: JsMsg) => {
      if (finished) return;
      m.ack();
      if (m.redelivered) return;
      onValue(lastValue(m, prefix.length));
      if (++i >= count || m.info.pending === 0) end(true);
    },
  });
  // However the read ends, nothing more is taken (a value passed after the end is dropped above).
  void done.then(() => messages.stop());
  void messages.closed().then(
    () => end(false),
    () => end(false),
  );
  void (async () => {
    // A consumer that went away (a server restarted meanwhile) sends no heartbeats: the read ends
    // unfinished, and its watch is started again by its owner.
    for await (const s of messages.status()) if (s.type === 'heartbeats_missed') return end(false);
  })();
  return { consumer: info.name, count, done, stop: () => end(false) };
}

function lastValue(m: JsMsg, prefixLength: number): StoredMessage {
  const op = m.headers?.get('KV-Operation');
  return {
    key: m.subject.substring(prefixLength),
    revision: m.seq,
    operation: op === 'DEL' || op === 'PURGE' ? op : 'PUT',
    value: m.data,
    created: m.time,
  };
}

/**
 * The inbox prefix the connection was made with (a bridge's user may subscribe only under its own):
 * the connection's options, as the kv client reads them for its own consumers.
 */
function inboxPrefixOf(nc: NatsConnection): string | undefined {
  return (nc as unknown as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
}
