/**
 * Builds the guard on a NATS connection: its buckets, its policy, and the `admit` and `control`
 * endpoints of service `shrooms-guard` (queue group `shrooms-guard`, so any number of replicas share
 * the work; their shared state is in JetStream KV). Nothing here reads the environment.
 */
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import {
  BUCKETS,
  GuardAdmitRequestSchema,
  GuardControlRequestSchema,
  QUEUE_GROUPS,
  SERVICE_NAMES,
  subjects,
  type PolicyFile,
} from '@shrooms/protocol';
import { addService, jsonEndpoint, retryJetStream, type Logger, type Service } from '@shrooms/runtime';
import { admitter, type Admit, type AdmitLimits } from './admit/admit.js';
import type { GuardConfig } from './config.js';
import { controller } from './control/control.js';
import { signalReader, type SignalReader } from './hold/signals.js';
import { loadPolicyFile } from './policy/file.js';
import { ruleFor } from './policy/match.js';
import { PolicyOverrides } from './policy/overrides.js';
import { refusalPublisher } from './refusals.js';
import { WindowStore } from './window/store.js';

export const GUARD_VERSION = '0.1.0';

export interface BuildGuardOptions {
  nc: NatsConnection;
  log: Logger;
  config: Readonly<GuardConfig>;
  /** Clock for the windows (tests). Default Date.now. */
  now?: () => number;
  /** Where session signals come from (tests). Default: the signal field. */
  readSignal?: SignalReader;
}

export interface Guard {
  service: Service;
  admit: Admit;
  control: ReturnType<typeof controller>;
  stop(): Promise<void>;
}

export async function buildGuard({ nc, log, config, now, readSignal }: BuildGuardOptions): Promise<Guard> {
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
  const kv = await retryJetStream(() =>
    new Kvm(js).create(BUCKETS.guard, {
      history: 1,
      replicas: config.SHROOMS_REPLICAS,
      ttl,
      description: 'shrooms guard: loop-guard and budget windows (task ids admitted, with times); compare-and-set only',
    }),
  );
  const windows = new WindowStore(kv, { log, ...(now ? { now } : {}) });
  const overrides = await PolicyOverrides.open(nc, { replicas: config.SHROOMS_REPLICAS, log });

  const empty: PolicyFile = {};
  const file = config.GUARD_POLICY_FILE
    ? await loadPolicyFile(config.GUARD_POLICY_FILE, { debounceMs: config.GUARD_POLICY_DEBOUNCE_MS, log })
    : undefined;
  const filePolicy = () => file?.current() ?? empty;
  const rules = (agent: string) => ruleFor(agent, filePolicy(), overrides.rules);

  const admit = admitter({
    limits,
    windows,
    ruleFor: rules,
    readSignal: readSignal ?? signalReader(nc, log),
    onRefusal: refusalPublisher(nc, now),
    log,
  });
  const control = controller({ windows, overrides, filePolicy, ruleFor: rules, rate: limits.rate, budget: limits.budget });

  const service = await addService(nc, {
    name: SERVICE_NAMES.guard,
    version: GUARD_VERSION,
    description: 'shrooms admission: loop guard, chain rules, allow-lists, agent budgets',
    queue: QUEUE_GROUPS.guard,
    metadata: { rateMax: String(limits.rate.max), rateWindowMs: String(limits.rate.windowMs), maxDepth: String(limits.maxDepth) },
  });
  jsonEndpoint(
    service,
    'admit',
    { subject: subjects.guardAdmit(), queue: QUEUE_GROUPS.guard },
    (data) => ({ req: GuardAdmitRequestSchema.parse(data), receivedAt: Date.now() }),
    ({ req, receivedAt }) => admit(req, receivedAt),
    log,
  );
  jsonEndpoint(
    service,
    'control',
    { subject: subjects.guardControl(), queue: QUEUE_GROUPS.guard },
    (d) => GuardControlRequestSchema.parse(d),
    control,
    log,
  );

  return {
    service,
    admit,
    control,
    async stop() {
      file?.close();
      overrides.close();
      await service.stop();
    },
  };
}
