/**
 * The gateway's port to admission, asked before a new task is admitted; it fails closed. Two ways,
 * one rule: `natsGuard` asks the guard service over NATS (GATEWAY_GUARD=service), `localGuard` runs
 * the same admission (libs/admission) in this process over the same shared KV windows
 * (GATEWAY_GUARD=local), which saves the request, the reply and a process on every new task.
 */
import type { Admission } from '@shrooms/admission';
import { askGuard, guardControl, guardRefusal } from '@shrooms/client';
import { ShroomsError, isShroomsError, toWireError, type GuardAdmitRequest, type GuardDecision } from '@shrooms/protocol';
import { SpanKind, inSpan, traceHeaders, type NatsConnection } from '@shrooms/runtime';
import type { GuardPort } from './service.js';

type AdmitQuestion = Parameters<GuardPort['admit']>[0];

/**
 * What the guard is asked about a new task (the caller as the gateway proved it): every field set,
 * so it is a whole request as it stands — in the process no schema needs to fill it in.
 */
function admitInput(req: AdmitQuestion): GuardAdmitRequest {
  return {
    machine: req.machine,
    session: req.session,
    taskId: req.taskId,
    origin: { device: req.caller.device, ...(req.caller.from ? { from: req.caller.from } : {}) },
    ...(req.parent ? { parent: req.parent } : {}),
    chain: req.chain,
    depth: req.depth,
    // An agent asks when a session claims to be the sender and no proven schedule stands behind it.
    fromAgent: !!req.caller.from && !req.scheduled,
    ...(req.agent ? { agent: req.agent } : {}),
  };
}

function decided(decision: GuardDecision): { hold: boolean } {
  const refusal = guardRefusal(decision);
  if (refusal) throw refusal;
  return { hold: decision.hold };
}

export function natsGuard(nc: NatsConnection, timeoutMs: number): GuardPort {
  return {
    admit: async (req) => decided(await askGuard(nc, admitInput(req), { timeoutMs, headers: traceHeaders() })),
    control: (req) => guardControl(nc, req, timeoutMs),
  };
}

export function localGuard(admission: Admission): GuardPort {
  async function decide(req: AdmitQuestion): Promise<GuardDecision> {
    try {
      return await admission.admit(admitInput(req));
    } catch (err) {
      // As askGuard: a failure of the windows' store never admits.
      const refusal = isShroomsError(err)
        ? err
        : new ShroomsError('GUARD_UNAVAILABLE', `admission failed (${(err as Error).message}); nothing was admitted`);
      return { admit: false, hold: false, error: toWireError(refusal) };
    }
  }
  return {
    // A span of its own, as the guard service's `admit` is, so a trace shows the decision either way.
    admit: async (req) =>
      decided(
        await inSpan('admit in the gateway', { kind: SpanKind.INTERNAL, attributes: { 'shrooms.admission': 'local' } }, async (span) => {
          const decision = await decide(req);
          span.setAttribute('shrooms.admitted', decision.admit);
          return decision;
        }),
      ),
    control: (req) => admission.control(req),
  };
}
