/**
 * A session-bridge's service client (`subjects.bridge(M, S, op)`), for the gateway: deliver a
 * message, cancel a task, the worker's update, the owner's controls. Replies are parsed; a refusal
 * comes back as the ShroomsError it was; a bridge that does not answer in `timeoutMs` is
 * BRIDGE_UNAVAILABLE (retryable: its tasks wait in the ledger).
 */
import {
  requestTimeoutError,
  subjects,
  type CancelRequest,
  type ControlRequest,
  type DeliverRequest,
  type Task,
  type UpdateRequest,
  withFields,
} from '@shrooms/protocol';
import { quietRequests, requestJson, type NatsConnection, type QuietRequest } from '@shrooms/runtime';

export interface BridgeClient {
  /** The task as stored and, from bridges that know it, its ledger entry's version. */
  deliver(req: DeliverRequest): Promise<{ task: Task; v?: number }>;
  /**
   * A new task's delivery, sent `quiet`: the bridge replies only when it did not create the task (a
   * refusal, an error, a resend); `seen` is the caller's own view of the ledger showing it. Resolves
   * with whichever comes first; neither within `timeoutMs` is BRIDGE_UNAVAILABLE, as for `deliver`
   * (the request says so: `seenWithinMs`, so that a bridge holding the create writes it in time).
   */
  deliverQuietly<S>(req: DeliverRequest, seen: Promise<S>): Promise<{ reply: { task: Task; v?: number } } | { seen: S }>;
  cancel(machine: string, session: string, req: CancelRequest): Promise<Task>;
  update(req: UpdateRequest): Promise<Task>;
  control(machine: string, session: string, req: ControlRequest): Promise<{ task?: Task; remindersStopped: boolean }>;
}

/** `timeoutMs`: how long a bridge may take to answer (the delivery ack limit). */
export function bridgeClient(nc: NatsConnection, { timeoutMs }: { timeoutMs: number }): BridgeClient {
  const call = <T>(machine: string, session: string, op: 'deliver' | 'cancel' | 'update' | 'control', body: unknown) =>
    requestJson<{ ok: true } & T>(nc, subjects.bridge(machine, session, op), body, {
      timeoutMs,
      unavailable: () => requestTimeoutError('BRIDGE_UNAVAILABLE', `${machine}/${session}`),
    });
  let quiet: QuietRequest | undefined;
  return {
    deliverQuietly(req, seen) {
      quiet ??= quietRequests(nc).request;
      return quiet(
        subjects.bridge(req.machine, req.session, 'deliver'),
        withFields(req, { quiet: true, takenLater: true, seenWithinMs: timeoutMs }),
        seen,
        {
          timeoutMs,
          unavailable: () => requestTimeoutError('BRIDGE_UNAVAILABLE', `${req.machine}/${req.session}`),
        },
      );
    },
    async deliver(req) {
      const { task, v } = await call<{ task: Task; v?: number }>(req.machine, req.session, 'deliver', req);
      return { task, ...(typeof v === 'number' ? { v } : {}) };
    },
    async cancel(machine, session, req) {
      return (await call<{ task: Task }>(machine, session, 'cancel', req)).task;
    },
    async update(req) {
      return (await call<{ task: Task }>(req.machine, req.session, 'update', req)).task;
    },
    async control(machine, session, req) {
      const { ok: _ok, ...rest } = await call<{ task?: Task; remindersStopped: boolean }>(machine, session, 'control', req);
      return rest;
    },
  };
}
