/**
 * Which gateway serves a recipient: the operator's static map (`SHROOMS_GATEWAYS`) when it names
 * the machine, else the one the session announces in the signal field (`gatewayUrl`), else — for
 * this machine's own sessions — the local gateway (`SHROOMS_GATEWAY_URL`). The map comes first
 * because it is configuration the operator wrote, while a signal is an announcement any bridge of
 * that machine makes; the signal field is only a routing hint here, never a task's state.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, SignalSchema, keys, signalFreshness } from '@shrooms/protocol';

export interface GatewayResolverOptions {
  machine: string;
  localUrl: string;
  staticMap: Readonly<Record<string, string>>;
}

export type ResolveGateway = (machine: string, session: string) => Promise<string | null>;

export function gatewayResolver(nc: NatsConnection | null, opts: GatewayResolverOptions): ResolveGateway {
  let signals: KV | null = null;
  const signalUrl = async (machine: string, session: string): Promise<string | null> => {
    if (!nc) return null;
    try {
      signals ??= await new Kvm(nc).open(BUCKETS.signals);
      const e = await signals.get(keys.signal(machine, session));
      if (!e || e.operation !== 'PUT' || e.value.length === 0) return null;
      const s = SignalSchema.safeParse(e.json<unknown>());
      if (!s.success || !s.data.gatewayUrl) return null;
      // A faded signal (older than its ttl) is no longer a hint.
      if (!signalFreshness(s.data)) return null;
      return s.data.gatewayUrl.replace(/\/$/, '');
    } catch {
      return null;
    }
  };
  return async function resolveGateway(machine, session) {
    return opts.staticMap[machine] ?? (await signalUrl(machine, session)) ?? (machine === opts.machine ? opts.localUrl : null);
  };
}
