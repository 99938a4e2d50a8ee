/**
 * The gateway's side of the guard. `askGuard` never admits by accident: no answer in time, no guard
 * at all, an error, or an answer it cannot read all come back as a refusal (GUARD_UNAVAILABLE, or
 * the guard's own error) — it never throws and never returns `admit: true` unless a guard said so.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import {
  DEFAULT_LIMITS,
  GuardDecisionSchema,
  ShroomsError,
  fromWireError,
  isShroomsError,
  subjects,
  toWireError,
  type GuardAdmitRequestSchema,
  type GuardControlRequest,
  type GuardDecision,
} from '@shrooms/protocol';
import { requestJson } from '@shrooms/runtime';
import type { z } from 'zod';

export type GuardAdmitInput = z.input<typeof GuardAdmitRequestSchema>;

export interface AskGuardOptions {
  /** How long to wait for a guard, ms. Default DEFAULT_LIMITS.guardTimeoutMs (2 000). */
  timeoutMs?: number;
  /** NATS headers to send along (e.g. `traceparent`). */
  headers?: Record<string, string>;
}

export async function askGuard(nc: NatsConnection, req: GuardAdmitInput, opts: AskGuardOptions = {}): Promise<GuardDecision> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LIMITS.guardTimeoutMs;
  const unavailable = () =>
    new ShroomsError('GUARD_UNAVAILABLE', `no guard answered within ${timeoutMs} ms; nothing was admitted`, { timeoutMs });
  try {
    const reply = await requestJson<Record<string, unknown>>(nc, subjects.guardAdmit(), req, {
      timeoutMs,
      unavailable,
      ...(opts.headers ? { headers: opts.headers } : {}),
    });
    const parsed = GuardDecisionSchema.safeParse(reply);
    if (!parsed.success || (!parsed.data.admit && !parsed.data.error)) {
      return refused(new ShroomsError('GUARD_UNAVAILABLE', 'the guard answered something unreadable; nothing was admitted'));
    }
    return parsed.data;
  } catch (err) {
    return refused(
      isShroomsError(err)
        ? err
        : new ShroomsError('GUARD_UNAVAILABLE', `asking the guard failed (${(err as Error).message}); nothing was admitted`),
    );
  }
}

function refused(err: ShroomsError): GuardDecision {
  return { admit: false, hold: false, error: toWireError(err) };
}

/** The guard's control endpoint (owners and operators): a loop-guard window, allow-list rules. */
export async function guardControl(
  nc: NatsConnection,
  req: GuardControlRequest,
  timeoutMs: number = DEFAULT_LIMITS.guardTimeoutMs,
): Promise<Record<string, unknown>> {
  return requestJson<Record<string, unknown>>(nc, subjects.guardControl(), req, {
    timeoutMs,
    unavailable: () => new ShroomsError('GUARD_UNAVAILABLE', `no guard answered within ${timeoutMs} ms`),
  });
}

/** The refusal as an error to answer the A2A client with, or undefined when admitted. */
export function guardRefusal(decision: GuardDecision): ShroomsError | undefined {
  if (decision.admit) return undefined;
  return fromWireError(
    (decision.error as Parameters<typeof fromWireError>[0] | undefined) ?? {
      key: 'GUARD_UNAVAILABLE',
      message: 'refused without a reason',
    },
  );
}
