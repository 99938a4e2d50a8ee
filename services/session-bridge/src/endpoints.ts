/** The bridge's NATS endpoints (services API): deliver, cancel, update, control. */
import {
  CancelRequestSchema,
  ControlRequestSchema,
  DeliverRequestSchema,
  SERVICE_NAMES,
  UpdateRequestSchema,
  subjects,
} from '@shrooms/protocol';
import { NO_REPLY, REPLY_TAKEN, addService, jsonEndpoint, type Service } from '@shrooms/runtime';
import type { NatsConnection } from '@shrooms/runtime';
import type { Bridge } from './bridge/bridge.js';
import type { BridgeConfig } from './config.js';

export const BRIDGE_VERSION = '0.1.0';

export async function registerBridgeService(
  bridge: Bridge,
  { nc, config }: { nc: NatsConnection; config: BridgeConfig },
): Promise<Service> {
  const log = bridge.log;
  const svc = await addService(nc, {
    name: SERVICE_NAMES.bridge,
    version: BRIDGE_VERSION,
    description: `session-bridge of ${bridge.machine}/${bridge.session} (${config.BRIDGE_HARNESS})`,
    metadata: { machine: bridge.machine, session: bridge.session, harness: config.BRIDGE_HARNESS },
    queue: '',
  });
  const s = (op: 'deliver' | 'cancel' | 'update' | 'control') => ({ subject: subjects.bridge(bridge.machine, bridge.session, op) });
  jsonEndpoint(
    svc,
    'deliver',
    s('deliver'),
    (d) => DeliverRequestSchema.parse(d),
    async (req) => {
      const { task, v, created } = await bridge.deliver(req);
      // A quiet delivery's new task reaches the gateway through its ledger watch.
      if (!req.quiet || !created) return { task, v };
      return req.takenLater ? REPLY_TAKEN : NO_REPLY;
    },
    log,
  );
  jsonEndpoint(
    svc,
    'cancel',
    s('cancel'),
    (d) => CancelRequestSchema.parse(d),
    async (req) => ({ task: await bridge.cancel(req) }),
    log,
  );
  jsonEndpoint(
    svc,
    'update',
    s('update'),
    (d) => UpdateRequestSchema.parse(d),
    async (req) => ({ task: await bridge.update(req) }),
    log,
  );
  jsonEndpoint(
    svc,
    'control',
    s('control'),
    (d) => ControlRequestSchema.parse(d),
    async (req) => bridge.control(req),
    log,
  );
  return svc;
}
