/**
 * The tick loop: finds due schedules and turns each occurrence into tasks, exactly once in the
 * ledger, with any number of replicas.
 *
 * How one occurrence is fired (crash windows in brackets):
 *   1. read the schedule (revision r) and plan it against the missed-occurrence policy;
 *   2. claim: compare-and-set at r a lease {replica, until, occurrence} — at most one replica wins;
 *      [dies here: the lease runs out, another replica (or this one restarted) sends instead]
 *   3. send the occurrence to every recipient's gateway with the message id derived from schedule
 *      and occurrence (`sched-<id>-<stamp>`);
 *      [dies here, or the lease ran out while sending: the next sender resends the SAME message id,
 *       which the gateway answers with the task already in the ledger — no second task]
 *   4. advance: compare-and-set `next` to the following occurrence, only if `next` is still this one.
 *      [NATS down here: retried until the lease runs out; then step 3's resend covers it]
 * So the claim is what keeps replicas from sending the same occurrence twice in the normal case,
 * and the derived message id is what makes every remaining double a resend: never lost (the
 * schedule only moves on after a send was answered) and never doubled (in the ledger).
 *
 * Over 300 lines because the firing steps and their crash windows are one argument, read top to
 * bottom; the pure rules (occurrences, missed policy) are already apart in rules/.
 */
import { decodeToken, parseAgent, occurrenceMessageId, type Delivery, type Occurrence, type Schedule } from '@shrooms/protocol';
import { keepWatching, type Logger } from '@shrooms/runtime';
import type { SchedulerConfig } from './config.js';
import type { ResolveGateway } from './deliver/gateways.js';
import { occurrenceMessage, resultMessage } from './deliver/occurrence.js';
import type { ReadTask } from './deliver/results.js';
import type { SendMessage, SendResult } from './deliver/send.js';
import { planDue } from './rules/missed.js';
import { compileRule, nextOccurrence, type CompiledRule } from './rules/occurrences.js';
import type { Marker, ScheduleStorePort, StoredSchedule } from './store.js';

export type EngineConfig = Pick<
  SchedulerConfig,
  | 'SCHEDULER_TICK_MS'
  | 'SCHEDULER_MISSED'
  | 'SCHEDULER_GRACE_MS'
  | 'SCHEDULER_LEASE_MS'
  | 'SCHEDULER_RETRY_MAX_MS'
  | 'SCHEDULER_RESCAN_MS'
  | 'SCHEDULER_RESULTS_MS'
  | 'SCHEDULER_RETAIN_FINISHED_MS'
  | 'SCHEDULER_REPLICA_ID'
  | 'LIMIT_AWAITING'
  | 'LIMIT_FINISHED_SCHEDULES'
>;

export interface EngineDeps {
  store: ScheduleStorePort;
  send: SendMessage;
  resolveGateway: ResolveGateway;
  /** Reads a task's state from the ledger (results for `replyTo`); absent = results not sent back. */
  readTask?: ReadTask;
  /**
   * This machine, and how to say in the bucket that it runs a scheduler (store `announce`): done by
   * the rescan at start and by any later one that does not find it said (an operator may have
   * removed it); gateways take occurrences only from a machine said so.
   */
  announce?: { machine: string; write: () => Promise<void> };
  log: Logger;
  config: EngineConfig;
  /** The clock, ms (tests of the engine in-process may drive it). */
  now?: () => number;
}

/** Most occurrences fired at once by one replica, and, apart from those, most schedules sending results back at once. */
const CONCURRENCY = 16;

/**
 * How long `stop` waits for occurrences and results in flight to be sent and recorded. One still in
 * flight then (NATS away: its writes are retried until its lease runs out) is left: the next
 * scheduler to fire it sends it again under the same message id (step 3), so nothing is lost or
 * doubled. Well under the 10 s a service has to stop (runtime `onShutdown`).
 */
export const STOP_WAIT_MS = 5_000;

const iso = (ms: number) => new Date(ms).toISOString();

function idOfKey(key: string): string | null {
  try {
    return key.includes('.') ? null : decodeToken(key);
  } catch {
    return null;
  }
}

/**
 * How long an occurrence waits before it is sent again: for each recipient still pending, the wait
 * its gateway asked for (Retry-After: 2 s while NATS or the guard is away, the loop guard's own),
 * or — when no gateway answered (unreachable, none known) — 1 s doubling with each attempt; the
 * longest of them, at most `maxMs`. Backing off blindly from a gateway that asked for 2 s would
 * push a takeover after a cut far past the cut's end (machines tests, scenario 7).
 */
export function retryDelay(pending: { retryAfterMs?: number }[], attempts: number, maxMs: number): number {
  const blind = 1000 * 2 ** (attempts - 1);
  return Math.min(maxMs, Math.max(...pending.map((p) => p.retryAfterMs ?? blind)));
}

export class Engine {
  /** The schedules as last seen (watch, rescans and own writes); decisions re-read the store. */
  readonly cache = new Map<string, StoredSchedule>();
  private readonly rules = new Map<string, CompiledRule>();
  /** Schedules firing an occurrence, by id. */
  private readonly firing = new Map<string, Promise<void>>();
  /**
   * Schedules sending results back, by id: slots of their own, so they never hold up firing. One
   * schedule may fire while its results go back; both write it with compare-and-set.
   */
  private readonly returning = new Map<string, Promise<void>>();
  /** When each schedule's results were last looked at (ms), to look again only after SCHEDULER_RESULTS_MS. */
  private readonly resultsLookedAt = new Map<string, number>();
  private readonly log: Logger;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private stopWatch: (() => void) | undefined;
  private running = false;
  private lastRescan = 0;
  private rescanning: Promise<void> | undefined;
  private ticking: Promise<void> | undefined;
  /** A sweep of removal markers was refused (an older NATS user without stream purge): said once. */
  private markersRefused = false;

  constructor(readonly d: EngineDeps) {
    this.log = d.log.child({ replica: d.config.SCHEDULER_REPLICA_ID });
    this.now = d.now ?? Date.now;
  }

  get replicaId(): string {
    return this.d.config.SCHEDULER_REPLICA_ID;
  }

  /** Loads every schedule, follows changes, and starts ticking. */
  async start(): Promise<void> {
    this.running = true;
    await this.rescan();
    await this.watch();
    const loop = () => {
      if (!this.running) return;
      this.ticking = this.tick()
        .catch((err: unknown) => this.log.warn({ err }, 'tick failed'))
        .finally(() => {
          if (this.running) this.timer = setTimeout(loop, this.d.config.SCHEDULER_TICK_MS);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  /**
   * Stops ticking and following, then waits up to `waitMs` for sends in flight (their schedules are
   * advanced before it returns; see STOP_WAIT_MS for one that is not). A rescan in flight is not
   * waited for: it reads, and removes only what is old and unchanged, which the next one does again —
   * and while NATS is away it waits out JetStream's retries (about 40 s), far past a service's stop.
   */
  async stop(waitMs = STOP_WAIT_MS): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.stopWatch?.();
    await this.ticking;
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      this.idle().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
    ]);
    clearTimeout(timer);
    if (!waited)
      this.log.warn(
        { firing: [...this.firing.keys()], returning: [...this.returning.keys()], waitedMs: waitMs },
        'stopped with sends in flight: each is sent again, under its same message id, when a scheduler next fires it',
      );
  }

  /** Remembers a schedule as stored (own writes, watch, rescans), keeping the newest revision. */
  remember(id: string, s: StoredSchedule | null): void {
    if (!s) {
      this.cache.delete(id);
      this.rules.delete(id);
      this.resultsLookedAt.delete(id);
      return;
    }
    const cur = this.cache.get(id);
    if (!cur || cur.revision <= s.revision) this.cache.set(id, s);
  }

  private async watch(): Promise<void> {
    try {
      // A watch that ends by itself is started again; what it missed meanwhile the next rescan finds.
      this.stopWatch = await keepWatching(
        (ended) =>
          this.d.store.watch((key, s) => {
            // Keys that are not schedules (the health check's `_health.…`) are not followed.
            const id = s?.schedule.id ?? idOfKey(key);
            if (id) this.remember(id, s);
          }, ended),
        { log: this.log, what: 'the schedule watch' },
      );
    } catch (err) {
      this.log.warn({ err }, 'cannot watch schedules; retrying');
      if (this.running) setTimeout(() => void this.watch(), 1000).unref();
    }
  }

  /**
   * Re-reads the whole bucket (the watch may have missed changes while NATS was away) and drops old
   * finished schedules, and the oldest past LIMIT_FINISHED_SCHEDULES.
   */
  async rescan(): Promise<void> {
    // Only what was cached before the read may be dropped for missing from it: a schedule created
    // while the read ran (remembered by `create` and the watch) is not in it, and the watch has
    // nothing more to say about it; dropped, it would not fire until the next rescan.
    const before = new Set(this.cache.keys());
    const { schedules: all, markers, schedulers } = await this.d.store.scan();
    if (this.d.announce && !schedulers.includes(this.d.announce.machine)) await this.d.announce.write();
    const seen = new Set<string>();
    const now = this.now();
    for (const s of all) {
      seen.add(s.schedule.id);
      this.remember(s.schedule.id, s);
      if (
        s.schedule.state !== 'active' &&
        s.schedule.awaiting.length === 0 &&
        now - Date.parse(s.schedule.updatedAt) > this.d.config.SCHEDULER_RETAIN_FINISHED_MS
      ) {
        await this.removeStored(s);
      }
    }
    for (const id of before) if (!seen.has(id)) this.remember(id, null);
    await this.trimFinished();
    await this.dropMarkers(markers);
    this.lastRescan = now;
  }

  /** Takes what removals left out of the bucket (store `dropMarkers`); a refusal is said once, and the rescan goes on. */
  private async dropMarkers(markers: Marker[]): Promise<void> {
    if (markers.length === 0 || !this.d.store.dropMarkers) return;
    try {
      await this.d.store.dropMarkers(markers);
    } catch (err) {
      if (!this.markersRefused)
        this.log.warn({ err, markers: markers.length }, 'removed schedules leave markers in the bucket; each rescan reads them');
      this.markersRefused = true;
    }
  }

  /**
   * Removes the oldest finished (canceled, done) schedules past LIMIT_FINISHED_SCHEDULES, as this
   * replica sees them: those with no results left to send back first, never an active one. Run by
   * each rescan and before each create, so a create→cancel loop cannot grow the bucket (and every
   * replica's cache) past LIMIT_SCHEDULES + LIMIT_FINISHED_SCHEDULES between two rescans.
   */
  async trimFinished(): Promise<void> {
    const limit = this.d.config.LIMIT_FINISHED_SCHEDULES;
    const finished = [...this.cache.values()].filter((s) => s.schedule.state !== 'active');
    if (finished.length <= limit) return;
    const pending = (s: StoredSchedule) => (s.schedule.awaiting.length > 0 ? 1 : 0);
    const age = (s: StoredSchedule) => Date.parse(s.schedule.updatedAt);
    finished.sort((a, b) => pending(a) - pending(b) || age(a) - age(b));
    const drop = finished.slice(0, finished.length - limit);
    for (const s of drop) await this.removeStored(s);
    this.log.info({ removed: drop.length, limit }, 'oldest finished schedules removed early (LIMIT_FINISHED_SCHEDULES)');
  }

  /** Purges a schedule at the revision seen (not if it changed since) and forgets it; the next rescan finds it if it stayed. */
  private async removeStored(s: StoredSchedule): Promise<void> {
    await this.d.store.remove(s.schedule.id, s.revision).catch(() => {});
    this.remember(s.schedule.id, null);
  }

  /** One pass over the schedules: fire what is due, send back finished results. */
  async tick(): Promise<void> {
    const now = this.now();
    // The periodic re-read runs beside the ticks, never in their way: while JetStream does not
    // answer (a machine cut off, a leader moving) a rescan waits out its request timeout, and one
    // awaited here held every tick — and so every takeover — for that long, again on each tick as
    // a failed rescan was due at once. A failed one is tried again after SCHEDULER_RESCAN_MS.
    if (!this.rescanning && now - this.lastRescan >= this.d.config.SCHEDULER_RESCAN_MS) {
      this.lastRescan = now;
      this.rescanning = this.rescan()
        .catch((err: unknown) => this.log.warn({ err }, 'rescan failed'))
        .finally(() => (this.rescanning = undefined));
    }
    // Firing and sending results back have slots of their own, and each pass walks the cache in
    // the order schedules were added. With one pool, schedules whose results could not go yet (a
    // task still open, the replyTo machine offline, its loop guard) took every slot on every tick,
    // and no schedule after them in the cache ever fired again. Results are also looked at only
    // every SCHEDULER_RESULTS_MS per schedule: they wait on a worker, not on the tick.
    for (const [id, { schedule: s }] of this.cache) {
      if (this.firing.size >= CONCURRENCY) break;
      if (!this.firing.has(id) && this.isDue(s, now)) this.track(this.firing, id, this.fire(id));
    }
    for (const [id, { schedule: s }] of this.cache) {
      if (this.returning.size >= CONCURRENCY) break;
      if (!this.returning.has(id) && this.resultsDue(id, s, now)) this.track(this.returning, id, this.lookAtResults(id));
    }
  }

  /** Waits until nothing is in flight (tests, stop). */
  async idle(): Promise<void> {
    while (this.firing.size + this.returning.size > 0) await Promise.allSettled([...this.firing.values(), ...this.returning.values()]);
  }

  private track(inflight: Map<string, Promise<void>>, id: string, p: Promise<void>): void {
    const done = p
      .catch((err: unknown) => this.log.warn({ err, schedule: id }, 'schedule step failed; retried next tick'))
      .finally(() => inflight.delete(id));
    inflight.set(id, done);
  }

  private resultsDue(id: string, s: Schedule, now: number): boolean {
    if (s.awaiting.length === 0 || !s.replyTo || !this.d.readTask) return false;
    const last = this.resultsLookedAt.get(id);
    return last === undefined || now - last >= this.d.config.SCHEDULER_RESULTS_MS;
  }

  /**
   * Sends what results are ready, then waits SCHEDULER_RESULTS_MS from the end of this look, not its
   * start: a look that waited out a slow gateway does not begin again at once and keep its slot.
   */
  private async lookAtResults(id: string): Promise<void> {
    try {
      await this.sendResults(id);
    } finally {
      if (this.cache.has(id)) this.resultsLookedAt.set(id, this.now());
    }
  }

  private isDue(s: Schedule, now: number): boolean {
    if (s.state !== 'active' || !s.next || Date.parse(s.next.at) > now) return false;
    if (s.lease && s.lease.by !== this.replicaId && Date.parse(s.lease.until) > now) return false;
    if (s.retry && s.retry.occurrence === s.next.at && Date.parse(s.retry.notBefore) > now) return false;
    return true;
  }

  private compiled(s: Schedule): CompiledRule {
    let cr = this.rules.get(s.id);
    if (!cr) this.rules.set(s.id, (cr = compileRule(s.rule)));
    return cr;
  }

  /** Fires the due occurrence of one schedule (or skips missed ones), per the module comment. */
  async fire(id: string): Promise<void> {
    const now = this.now();
    const cur = await this.d.store.get(id);
    this.remember(id, cur);
    if (!cur || !this.isDue(cur.schedule, now)) return;
    const s = cur.schedule;
    const cr = this.compiled(s);
    const plan = planDue(cr, s.next!, now, this.d.config.SCHEDULER_MISSED, this.d.config.SCHEDULER_GRACE_MS);
    if (plan.kind === 'wait') return;
    if (plan.kind === 'skip') {
      const { lease: _l, retry: _r, ...rest } = s;
      const skipped: Schedule = {
        ...rest,
        next: plan.next,
        state: plan.next ? 'active' : 'done',
        missed: s.missed + plan.skipped,
        updatedAt: iso(now),
      };
      const stored = await this.d.store.replace(skipped, cur.revision);
      if (stored) {
        this.remember(id, stored);
        this.log.warn(
          { schedule: id, skipped: plan.skipped, from: s.next!.at, resume: plan.next?.at ?? null },
          'missed occurrences skipped (SCHEDULER_MISSED=skip)',
        );
        // The occurrence it resumes with is within the window and may be due now: fire it in this pass.
        if (stored.schedule.next) await this.fire(id);
      }
      return;
    }

    const target = plan.occurrence;
    const { retry: prevRetry, ...base } = s;
    const claim: Schedule = {
      ...base,
      next: target,
      missed: s.missed + plan.skipped,
      lease: { by: this.replicaId, until: iso(now + this.d.config.SCHEDULER_LEASE_MS), occurrence: target.at },
      ...(prevRetry && prevRetry.occurrence === target.at ? { retry: prevRetry } : {}),
      updatedAt: iso(now),
    };
    const claimed = await this.d.store.replace(claim, cur.revision);
    if (!claimed) return; // another replica moved it first; the next tick looks again
    this.remember(id, claimed);
    this.log.info({ schedule: id, occurrence: target.at, leaseUntil: claim.lease!.until }, 'occurrence claimed');
    if (plan.skipped > 0)
      this.log.warn(
        { schedule: id, skipped: plan.skipped, firing: target.at },
        'missed occurrences: firing the latest once, late (SCHEDULER_MISSED=fire-once)',
      );

    const results = await this.deliverAll(claim, target, plan.late);
    const pending = results.filter((r) => r.result.outcome === 'retry');
    if (pending.length > 0) {
      const attempts = (prevRetry?.occurrence === target.at ? prevRetry.attempts : 0) + 1;
      const backoff = retryDelay(
        pending.map((p) => p.result as Extract<SendResult, { outcome: 'retry' }>),
        attempts,
        this.d.config.SCHEDULER_RETRY_MAX_MS,
      );
      const error = pending
        .map((p) => `${p.recipient}: ${(p.result as Extract<SendResult, { outcome: 'retry' }>).error.message}`)
        .join('; ');
      this.log.warn({ schedule: id, occurrence: target.at, attempts, retryInMs: backoff, error }, 'occurrence not taken yet; will retry');
      await this.afterSend(id, (c) => {
        if (c.next?.at !== target.at) return null;
        const { lease: _l, ...rest } = c;
        return {
          ...rest,
          retry: { occurrence: target.at, attempts, notBefore: iso(this.now() + backoff), error: error.slice(0, 1000) },
          updatedAt: iso(this.now()),
        };
      });
      return;
    }

    const deliveries: Delivery[] = results.map(({ recipient, result: r }) =>
      r.outcome === 'sent' || r.outcome === 'existing'
        ? { recipient, outcome: r.outcome, taskId: r.taskId }
        : { recipient, outcome: 'refused', error: (r as Extract<SendResult, { outcome: 'refused' }>).error },
    );
    const following = nextOccurrence(cr, target);
    const advanced = await this.afterSend(id, (c) => {
      if (c.next?.at !== target.at) return null; // already advanced by a replica that resent it
      const { lease: _l, retry: _r, ...rest } = c;
      const awaiting = c.replyTo
        ? [
            ...c.awaiting,
            ...deliveries.filter((d) => d.taskId).map((d) => ({ recipient: d.recipient, taskId: d.taskId!, occurrence: target.at })),
          ].slice(-this.d.config.LIMIT_AWAITING)
        : c.awaiting;
      return {
        ...rest,
        next: following,
        state: c.state === 'active' && !following ? 'done' : c.state,
        fired: c.fired + 1,
        last: { occurrence: target.at, firedAt: iso(this.now()), late: plan.late, deliveries },
        awaiting,
        updatedAt: iso(this.now()),
      };
    });
    this.log.info(
      {
        schedule: id,
        occurrence: target.at,
        late: plan.late,
        deliveries: deliveries.map((d) => `${d.recipient}:${d.outcome}`),
        next: following?.at ?? null,
        advanced,
      },
      'occurrence fired',
    );
  }

  private async deliverAll(s: Schedule, occ: Occurrence, late: boolean): Promise<{ recipient: string; result: SendResult }[]> {
    return Promise.all(
      s.recipients.map(async (recipient) => {
        const msg = occurrenceMessage(s, occ, recipient, late);
        const url = await this.d.resolveGateway(msg.machine, msg.session);
        if (!url)
          return {
            recipient,
            result: {
              outcome: 'retry',
              error: { key: 'NO_GATEWAY', message: `no gateway known for machine ${msg.machine} (no signal, not in SHROOMS_GATEWAYS)` },
            } as SendResult,
          };
        return { recipient, result: await this.d.send(url, msg) };
      }),
    );
  }

  /**
   * A write after a send: compare-and-set with re-reads, and retried while NATS is away, for as long
   * as the lease lasts (after that another replica's resend and advance take over). True if written.
   */
  private async afterSend(id: string, change: (c: Schedule) => Schedule | null): Promise<boolean> {
    const deadline = this.now() + this.d.config.SCHEDULER_LEASE_MS;
    for (let wait = 200; ; wait = Math.min(wait * 2, 2000)) {
      try {
        let wrote = false;
        const stored = await this.d.store.update(id, (c) => {
          const next = change(c);
          wrote = next !== null;
          return next;
        });
        this.remember(id, stored);
        return wrote;
      } catch (err) {
        if (this.now() + wait > deadline) {
          this.log.warn(
            { err, schedule: id },
            'could not record the send; the lease will run out and the occurrence be resent (same task)',
          );
          return false;
        }
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /** Sends finished results back to `replyTo`, then forgets them (each with its own derived id). */
  private async sendResults(id: string): Promise<void> {
    const cur = this.cache.get(id);
    if (!cur || !cur.schedule.replyTo || !this.d.readTask) return;
    const s = cur.schedule;
    const done: string[] = [];
    for (const a of s.awaiting) {
      const agent = parseAgent(a.recipient)!;
      const task = await this.d.readTask(agent.machine!, agent.session, occurrenceMessageId(s.id, a.occurrence));
      if (task && !task.finished) continue;
      if (task) {
        const msg = resultMessage(s, a.occurrence, a.recipient, a.taskId, task.state, task.text);
        // Every result goes to the one replyTo session: when it cannot take one now (no gateway
        // known, its loop guard, a gateway that times out), the rest wait for the next look too.
        const url = await this.d.resolveGateway(msg.machine, msg.session);
        if (!url) break;
        const r = await this.d.send(url, msg);
        if (r.outcome === 'retry') break;
        if (r.outcome === 'refused')
          this.log.warn({ schedule: id, replyTo: s.replyTo, error: r.error }, 'result refused by the reply-to session');
      }
      done.push(`${a.recipient}|${a.occurrence}`);
    }
    if (done.length === 0) return;
    const stored = await this.d.store.update(id, (c) => {
      const awaiting = c.awaiting.filter((a) => !done.includes(`${a.recipient}|${a.occurrence}`));
      return awaiting.length === c.awaiting.length ? null : { ...c, awaiting, updatedAt: iso(this.now()) };
    });
    this.remember(id, stored);
  }
}
