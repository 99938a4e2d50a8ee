/**
 * Taking a message in: a new task (within the session's room) or an answer to an open one, written
 * to the ledger and taken into the view; a new task's span begins here so its trace starts at the
 * bridge.
 *
 * A new task that waits is written outside the lock: deciding that it waits (holding its place in the
 * room) and queueing it once stored take the lock's turn, the write does not. So the deliveries to a
 * busy session are written side by side while its turn loop goes on, instead of each holding the lock
 * for a round trip to the ledger. Whatever touches such a task while it is written (a cancel, a change
 * by someone else) makes the intake read it again before queueing it.
 *
 * A new task whose sender waits for its end and hears of it from the ledger alone (a quiet, awaited
 * delivery: a blocking SendMessage) is not written at once: its create waits up to
 * BRIDGE_WRITE_WAIT_MS (and half the time its sender waits to see it, `seenWithinMs`) and goes with
 * its next change (Ledger.deferCreate) — for a quick worker, its start and result: one write for the
 * whole task. Nobody can see it missing: the sender is told nothing before the task's end, and this
 * process's own reads write it first. One the ledger refuses for good when it writes it at last (full:
 * LIMIT_EXCEEDED `retainedTasks`) leaves the view and its turn is cancelled, as a plain create's refusal
 * keeps it out: its sender hears LIMIT_EXCEEDED from the gateway, whose own intake meets the same ledger.
 */
import { META, withFields, type DeliverRequest } from '@shrooms/protocol';
import { intake, refusedForGood, type IntakeResult } from '@shrooms/ledger';
import type { Core } from './core.js';
import { takeUp } from './recovery.js';
import { startedTask, type TurnLoop } from './turns.js';

export type TakenIn = IntakeResult & { started: boolean };

interface Plan {
  req: DeliverRequest;
  /** The new task's ledger key ('' for an answer). */
  key: string;
  waits: boolean;
  start: boolean;
  /** Its create may wait to be written (see the top). */
  hold: boolean;
}

/** What of the turn loop the intake uses: a held create refused for good is dropped, and the next task looked for. */
export type IntakeTurns = Pick<TurnLoop, 'drop' | 'pump'>;

/**
 * A new task for a free session (nothing current, nothing queued or arriving, the harness idle, not
 * held for its owner) is stored already WORKING and becomes the current task: `started` tells the
 * caller to run its turn. Otherwise it waits in the queue for the turn loop.
 */
export async function takeIn(c: Core, req: DeliverRequest, turns: IntakeTurns): Promise<TakenIn> {
  const plan = await c.serial.run(async (): Promise<{ done: TakenIn } | { later: Plan }> => {
    const p = decide(c, req);
    // Written under the lock: a start (it changes what the session works on), an answer (rare), and
    // a resend that races its first delivery.
    // A held create costs no round trip: taken in at once.
    if (p.start || p.hold || !p.key || !c.view.reserve(p.key)) return { done: await write(c, p, turns) };
    return { later: p };
  });
  if ('done' in plan) return plan.done;
  const p = plan.later;
  let r: IntakeResult;
  try {
    r = await intake(c.ledger, p.req, { queued: p.waits, start: false });
  } catch (err) {
    c.spans.discard(p.key);
    // The write failed, yet the task may be in the ledger all the same: the gateway queues it there
    // itself when this bridge is slow to answer (a stream leader's election), and a change of it seen
    // meanwhile was left to this intake (`touch`). Such a task is read again and taken in.
    await c.serial.run(async () => {
      if (c.view.unreserve(p.key)) await takeInStored(c, p.key);
    });
    throw err;
  }
  return c.serial.run(async () => {
    if (!c.view.unreserve(p.key)) return settle(c, p, r);
    // Touched while it was written: what the view takes in is read again. Not only a task this
    // write created — one the gateway queued first (its create won, this one found it) is this
    // session's to run too, and its change seen meanwhile was left to this intake.
    // `settle` takes it up (recovery.ts takeUp) when it was not created here.
    const fresh = (await c.ledger.get(p.key, { atLeast: r.stored.revision }).catch(() => null)) ?? r.stored;
    return settle(c, p, { ...r, stored: fresh });
  });
}

/** Run under the lock: a task of the session found in the ledger, taken into the view (a finished one is not). */
async function takeInStored(c: Core, key: string): Promise<void> {
  const found = await c.ledger.get(key).catch((err: unknown) => {
    c.log.warn({ err, key }, 'a task whose intake failed could not be read again; it waits in the ledger until the bridge starts again');
    return null;
  });
  if (found) c.view.track(found);
}

/** Run under the lock: the room, the key, the span, and whether the task waits or starts. */
function decide(c: Core, req: DeliverRequest): Plan {
  const isNew = !req.taskId;
  if (isNew)
    c.view.checkRoom(`${c.machine}/${c.session}`, { queueLength: c.config.LIMIT_QUEUE_LENGTH, openTasks: c.config.LIMIT_OPEN_TASKS });
  const key = isNew ? c.ledger.key(c.machine, c.session, req.message.messageId) : '';
  // The span is begun before the create, which tells a new task from a resend (no read first);
  // a resend's span is discarded in `settle` (the first delivery's span is the task's).
  if (isNew) {
    const traceparent = c.spans.begin(key, {
      taskId: `${c.session}:${req.message.messageId}`,
      session: `${c.machine}/${c.session}`,
      device: req.origin.device,
      from: req.origin.from,
      depth: Number(req.metadata[META.depth] ?? 0),
    });
    if (traceparent) req = withFields(req, { metadata: withFields(req.metadata, { [META.traceparent]: traceparent }) });
  }
  const waits = c.view.busy(c.harnessIdle()) || c.view.queued > 0 || c.view.arriving > 0;
  const start = isNew && !waits && !c.stopping() && req.metadata[META.held] !== true;
  // Files to put into the session: the task is on record before (as its start is, turns.ts `begin`).
  const hold = isNew && req.quiet === true && req.awaited === true && req.message.parts.every((p) => 'text' in p);
  return { req, key, waits, start, hold };
}

/**
 * How long a held create may wait: BRIDGE_WRITE_WAIT_MS, and within half the time its sender waits to
 * see the task — past that, the gateway would take this bridge for gone and queue the task itself.
 */
function holdMs(writeWaitMs: number, seenWithinMs: number | undefined): number {
  return seenWithinMs === undefined ? writeWaitMs : Math.min(writeWaitMs, Math.floor(seenWithinMs / 2));
}

/** Run under the lock: the write and what it tells the view. */
async function write(c: Core, p: Plan, turns: IntakeTurns): Promise<TakenIn> {
  let r: IntakeResult;
  try {
    r = await intake(c.ledger, p.req, { queued: p.waits, start: p.start, ...(p.hold ? { hold: held(c, p, turns) } : {}) });
  } catch (err) {
    if (p.key) c.spans.discard(p.key);
    throw err;
  }
  return settle(c, p, r);
}

/**
 * A held create that was not written is said (the ledger holds it again until it is, deferred.ts
 * `putBack`); one refused for good (the ledger is full) is let go by the ledger, and the task leaves
 * the view: its turn, if it began, is cancelled (turns.ts `drop`, under the lock).
 */
function held(c: Core, p: Plan, turns: IntakeTurns): { ms: number; onError: (err: unknown) => void } {
  return {
    ms: holdMs(c.config.BRIDGE_WRITE_WAIT_MS, p.req.seenWithinMs),
    onError: (err) => {
      if (!refusedForGood(err)) {
        c.log.warn(
          { err, key: p.key },
          "a new task's create, held back, was not written: tried again while the bridge runs, unless another writer stored it",
        );
        return;
      }
      c.log.warn({ err, key: p.key }, "a new task's create, held back, was refused for good: the task is dropped");
      void c.serial
        .run(() => turns.drop(p.key))
        .then(
          () => turns.pump(),
          (e: unknown) => c.log.warn({ err: e, key: p.key }, 'a refused task could not be dropped'),
        );
    },
  };
}

/** Run under the lock: the span is the task's (or a resend's, discarded) and the view takes the task in. */
function settle(c: Core, p: Plan, r: IntakeResult): TakenIn {
  if (p.key) {
    if (r.created) c.spans.taken(p.key);
    else c.spans.discard(p.key);
  }
  const started = p.start && r.created;
  if (started) startedTask(c, r.stored);
  else if (r.created || r.answered) c.view.track(r.stored);
  // A resend of a task the view does not run: its first create may have been stored although it
  // seemed to fail (recovery.ts takeUp).
  else takeUp(c, r.stored);
  return withFields(r, { started });
}
