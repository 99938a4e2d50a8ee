/**
 * Reads a session's signal from the signal field (KV `shrooms_signals`) — only to learn whether it
 * runs tools without asking. The guard never creates that bucket (the bridges own it); while it
 * does not exist, every signal reads as missing.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, SignalSchema, keys, type Signal } from '@shrooms/protocol';
import type { Logger } from '@shrooms/runtime';

export type SignalReader = (machine: string, session: string) => Promise<Signal | null>;

export function signalReader(nc: NatsConnection, log: Logger): SignalReader {
  let kv: KV | undefined;
  return async function readSignal(machine, session) {
    try {
      kv ??= await new Kvm(nc).open(BUCKETS.signals);
      const e = await kv.get(keys.signal(machine, session));
      if (!e || e.operation !== 'PUT' || e.value.length === 0) return null;
      const parsed = SignalSchema.safeParse(e.json<unknown>());
      return parsed.success ? parsed.data : null;
    } catch (err) {
      kv = undefined;
      log.debug({ err: (err as Error).message, machine, session }, 'signal unreadable; taken as missing');
      return null;
    }
  };
}
