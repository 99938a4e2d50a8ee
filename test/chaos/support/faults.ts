/**
 * One fault under a steady load: start the load, wait until a third of it is acknowledged, kill
 * (SIGKILL), stay down, restart, and measure recovery with a probe ask that retries one message id
 * until its task is COMPLETED. Errors the load saw are then checked against the fault's window.
 */
import { AskLoad, sendAsk, type AskError, type AskLoadOptions, type AskRecord } from '@shrooms/testing';

export interface Fault {
  /** What was killed, for the table: `kill -9 gateway`. */
  what: string;
  /** Waits for the moment to strike (before the fault's clock starts). */
  before?(): Promise<void>;
  kill(): Promise<void>;
  restart(): Promise<void>;
  /** How long it stays down before the restart, ms. */
  downMs: number;
  /** The session whose asks go through the killed part (the probe asks it). */
  probeSession: string;
}

export interface FaultRun {
  records: AskRecord[];
  load: AskLoad;
  faultAt: number;
  restartAt: number;
  /** The probe's task completed: the affected path served a new ask end to end. */
  recoveredAt: number;
  /** Errors the load saw outside [faultAt, recoveredAt + grace] (must be none). */
  strayErrors: AskError[];
}

/**
 * Retries one ask (same message id) until its task is COMPLETED; resolves with that moment. A probe
 * task that ended otherwise (canceled by expiry while the session was stuck) is replaced by a new one.
 */
export async function probeUntilCompleted(gatewayUrl: string, session: string, messageId: string, boundMs = 120_000): Promise<number> {
  const deadline = Date.now() + boundMs;
  let last = '';
  let id = messageId;
  for (let n = 1; Date.now() < deadline;) {
    const a = await sendAsk(gatewayUrl, session, id, `probe ${id}`, { blocking: true, timeoutMs: 40_000 });
    const state = a.task?.status.state;
    if (state === 'TASK_STATE_COMPLETED') return Date.now();
    if (state === 'TASK_STATE_CANCELED' || state === 'TASK_STATE_FAILED' || state === 'TASK_STATE_REJECTED') id = `${messageId}-${++n}`;
    last = a.task ? `${id} ${state}` : `${a.error?.kind} ${a.error?.code ?? ''} ${a.error?.message}`;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`probe ${session}:${messageId} did not complete within ${boundMs} ms (last answer: ${last})`);
}

/** Errors that happened before the fault or to requests sent after the recovery (+ grace). */
export function strayErrors(errors: AskError[], faultAt: number, recoveredAt: number, graceMs: number): AskError[] {
  return errors.filter((e) => e.at < faultAt || e.startedAt > recoveredAt + graceMs);
}

export async function runFaultUnderLoad(
  load: AskLoadOptions,
  fault: Fault,
  opts: { graceMs?: number; probeId: string; during?: () => Promise<void> },
): Promise<FaultRun> {
  const l = new AskLoad(load);
  const running = l.run();
  await l.whenAcked(Math.ceil(load.count / 3));
  await fault.before?.();
  const faultAt = Date.now();
  await fault.kill();
  const probe = probeUntilCompleted(load.gatewayUrl, fault.probeSession, opts.probeId);
  await new Promise((r) => setTimeout(r, fault.downMs));
  const restartAt = Date.now();
  await fault.restart();
  await opts.during?.();
  const recoveredAt = await probe;
  const records = await running;
  return {
    records,
    load: l,
    faultAt,
    restartAt,
    recoveredAt,
    strayErrors: strayErrors(l.errors, faultAt, recoveredAt, opts.graceMs ?? 3_000),
  };
}
