/**
 * Builds the guard on a NATS connection: admission (libs/admission: its buckets, its policy) served
 * as the `admit` and `control` endpoints of service `shrooms-guard` (queue group `shrooms-guard`, so
 * any number of replicas share the work; their shared state is in JetStream KV). Nothing here reads
 * the environment.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { openAdmission, type Admit, type Control, type SignalReader } from '@shrooms/admission';
import { GuardAdmitRequestSchema, GuardControlRequestSchema, QUEUE_GROUPS, SERVICE_NAMES, subjects } from '@shrooms/protocol';
import { addService, jsonEndpoint, type Logger, type Service } from '@shrooms/runtime';
import type { GuardConfig } from './config.js';

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
  control: Control;
  stop(): Promise<void>;
}

export async function buildGuard({ nc, log, config, now, readSignal }: BuildGuardOptions): Promise<Guard> {
  const admission = await openAdmission({ nc, log, config, ...(now ? { now } : {}), ...(readSignal ? { readSignal } : {}) });
  const { admit, control, limits } = admission;

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
      await service.stop();
      // After the last admit: the loop-guard places it reserved ahead are given back.
      await admission.close();
    },
  };
}
