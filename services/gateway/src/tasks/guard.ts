/** The gateway's port to the guard service: asked before a new task is admitted; fails closed. */
import { askGuard, guardControl, guardRefusal } from '@shrooms/client';
import { traceHeaders, type NatsConnection } from '@shrooms/runtime';
import type { GuardPort } from './service.js';

export function natsGuard(nc: NatsConnection, timeoutMs: number): GuardPort {
  return {
    async admit(req) {
      const decision = await askGuard(
        nc,
        {
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
        },
        { timeoutMs, headers: traceHeaders() },
      );
      const refusal = guardRefusal(decision);
      if (refusal) throw refusal;
      return { hold: decision.hold };
    },
    control: (req) => guardControl(nc, req, timeoutMs),
  };
}
