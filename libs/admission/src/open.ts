/**
 * Opens admission on a NATS connection: the windows' and the rules' buckets, the policy file, and
 * the `admit` and `control` functions over them. The guard service answers them over NATS; a
 * gateway with GATEWAY_GUARD=local calls them in its own process. Both share the same KV windows,
 * changed only by compare-and-set, so the loop guard stays exact across any mix of them.
 */
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { BUCKETS, type PolicyFile } from '@shrooms/protocol';
import { retryJetStream, transientOrMadeMeanwhile, type Logger } from '@shrooms/runtime';
import { admitter, type Admit, type AdmitLimits } from './admit/admit.js';
import type { AdmissionConfig } from './config.js';
import { controller, type Control } from './control/control.js';
import { signalReader, type SignalReader } from './hold/signals.js';
import { loadPolicyFile } from './policy/file.js';
import { ruleFor } from './policy/match.js';
import { PolicyOverrides } from './policy/overrides.js';
import { refusalPublisher } from './refusals.js';
import { WindowStore } from './window/store.js';

export interface OpenAdmissionOptions {
  nc: NatsConnection;
  log: Logger;
  config: Readonly<AdmissionConfig & { SHROOMS_REPLICAS: number }>;
  /** Clock for the windows (tests). Default Date.now. */
  now?: () => number;
  /** Where session signals come from. Default: a read of the signal field per held-or-not question. */
  readSignal?: SignalReader;
}

export interface Admission {
  admit: Admit;
  control: Control;
  limits: AdmitLimits;
  /** Stops watching the policy and gives back the places reserved ahead (window/ahead.ts). */
  close(): Promise<void>;
}

export async function openAdmission({ nc, log, config, now, readSignal }: OpenAdmissionOptions): Promise<Admission> {
  const limits: AdmitLimits = {
    rate: { max: config.GUARD_RATE_MAX, windowMs: config.GUARD_RATE_WINDOW_MS },
    budget: config.GUARD_BUDGET_MAX > 0 ? { max: config.GUARD_BUDGET_MAX, windowMs: config.GUARD_BUDGET_WINDOW_MS } : null,
    maxDepth: config.GUARD_MAX_DEPTH,
    casDeadlineMs: config.GUARD_CAS_DEADLINE_MS,
    holdWhenUnknown: config.GUARD_HOLD_WHEN_UNKNOWN,
  };

  // A window key untouched for longer than any window holds only expired entries: the bucket's TTL
  // drops it by itself. At least a day, so a later, longer window never loses live entries early.
  const ttl = Math.max(24 * 60 * 60 * 1000, 2 * Math.max(limits.rate.windowMs, limits.budget?.windowMs ?? 0));
  const js = jetstream(nc, { timeout: Math.max(1000, config.GUARD_CAS_DEADLINE_MS) });
  // Retried while JetStream is slow to answer (an R3 bucket on a cluster still electing its leaders
  // timed out a guard's start); creating a bucket that exists with this configuration opens it.
  // Every admitter (guard replicas, gateways) makes the buckets if they are missing, so several may
  // at once: the next try of the one that lost opens what the other made.
  const kv = await retryJetStream(
    () =>
      new Kvm(js).create(BUCKETS.guard, {
        history: 1,
        replicas: config.SHROOMS_REPLICAS,
        ttl,
        description: 'shrooms guard: loop-guard and budget windows (task ids admitted, with times); compare-and-set only',
      }),
    { retryIf: transientOrMadeMeanwhile },
  );
  const windows = new WindowStore(kv, { log, ...(now ? { now } : {}) });
  const overrides = await PolicyOverrides.open(nc, { replicas: config.SHROOMS_REPLICAS, log, retryIf: transientOrMadeMeanwhile });

  const empty: PolicyFile = {};
  const file = config.GUARD_POLICY_FILE
    ? await loadPolicyFile(config.GUARD_POLICY_FILE, { debounceMs: config.GUARD_POLICY_DEBOUNCE_MS, log })
    : undefined;
  const filePolicy = () => file?.current() ?? empty;
  const rules = (agent: string) => ruleFor(agent, filePolicy(), overrides.rules);

  return {
    limits,
    admit: admitter({
      limits,
      windows,
      ruleFor: rules,
      readSignal: readSignal ?? signalReader(nc, log),
      onRefusal: refusalPublisher(nc, now),
      log,
    }),
    control: controller({ windows, overrides, filePolicy, ruleFor: rules, rate: limits.rate, budget: limits.budget }),
    async close() {
      file?.close();
      overrides.close();
      await windows.close();
    },
  };
}
