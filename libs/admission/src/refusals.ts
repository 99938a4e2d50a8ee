/**
 * Every refusal is published on `shrooms.refusal.M.S` (core NATS, not stored) for the dashboard and
 * for operators (`nats sub 'shrooms.refusal.>'`).
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { subjects, type GuardAdmitRequest, type RefusalEvent, type ShroomsError } from '@shrooms/protocol';

export function refusalPublisher(nc: NatsConnection, now: () => number = Date.now) {
  return function publishRefusal(req: GuardAdmitRequest, err: ShroomsError): void {
    const event: RefusalEvent = {
      at: new Date(now()).toISOString(),
      machine: req.machine,
      session: req.session,
      taskId: req.taskId,
      device: req.origin.device,
      ...(req.origin.from ? { from: req.origin.from } : {}),
      key: err.key,
      code: err.spec.code,
      message: err.message,
      details: err.details,
    };
    nc.publish(subjects.refusal(req.machine, req.session), JSON.stringify(event));
  };
}
