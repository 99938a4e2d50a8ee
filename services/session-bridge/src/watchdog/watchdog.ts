/**
 * The watchdog (spec §5): a session that is idle — no turn running, no prompt waiting, no
 * background command of its own still running — with a started task open is reminded along the
 * ladder; after the ladder the task is stalled, the owner notified, and the session freed for the
 * next task (the stalled one stays open). A session with no open task is never woken. Reminder
 * counts live in the task's metadata, so they survive a bridge restart.
 */
import { META, textOf } from '@shrooms/protocol';
import { contextFromTraceparent, humanDuration, inSpan } from '@shrooms/runtime';
import type { Bridge } from '../bridge/bridge.js';
import { origin } from '../prompt.js';
import { underCap, verdict, type LadderConfig } from './ladder.js';

export class Watchdog {
  private timer?: NodeJS.Timeout;
  /** A tick is running (reading the task, writing its count, or in the reminder's turn). */
  private busy = false;
  /** The task whose due reminder the hourly cap last held (logged once). */
  private capped?: string;

  constructor(
    readonly bridge: Bridge,
    readonly cfg: LadderConfig,
    readonly tickMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick().catch((err) => this.bridge.log.warn({ err }, 'watchdog tick failed')), this.tickMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * One tick at a time: a tick that waits on the ledger longer than the interval would otherwise
   * meet the next one, both would read the same count, and the session would be reminded twice.
   */
  async tick(now = Date.now()): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.check(now);
    } finally {
      this.busy = false;
    }
  }

  private async check(now: number): Promise<void> {
    const b = this.bridge;
    const q = b.quiet();
    if (q.remindersStopped || q.harness !== 'idle' || q.backgroundJobs > 0) return;
    const cur = q.current;
    if (!cur) return;
    const stored = await b.read(cur.key);
    if (!stored || stored.entry.task.status.state !== 'TASK_STATE_WORKING') return;
    const md = stored.entry.task.metadata ?? {};
    const log = Array.isArray(md[META.nudgeLog]) ? (md[META.nudgeLog] as number[]) : [];
    const state = {
      nudges: Number(md[META.nudges] ?? 0),
      lastNudge: md[META.lastNudge] ? Date.parse(String(md[META.lastNudge])) : undefined,
      stalled: !!md[META.stalled],
    };
    const v = verdict(this.cfg, state, q.lastActivityAt, now);
    if (v.kind === 'stall') return this.stall(cur.key, now);
    if (v.kind !== 'remind') return;
    if (!underCap(this.cfg, log, now)) {
      // Said once per task: a reminder was due and the hourly cap held it.
      if (this.capped !== cur.key) this.bridge.log.info({ taskId: stored.entry.task.id }, 'reminder held by the hourly cap');
      this.capped = cur.key;
      return;
    }

    const task = stored.entry.task;
    const quiet = now - Math.max(q.lastActivityAt, state.lastNudge ?? 0);
    const asked = Date.parse(String(md[META.createdAt] ?? '')) || now;
    const lastWords = q.lastWorkerLine || String(md[META.lastWorkerLine] ?? '');
    const text = [
      `[shrooms reminder] You have been quiet for ${humanDuration(quiet)} with a task open (reminder ${state.nudges + 1} of ${this.cfg.ladderMs.length + 1}).`,
      `- task ${task.id} from ${origin(task)}, asked ${humanDuration(now - asked)} ago: "${textOf(task.history?.[0]).slice(0, 400)}"`,
      `  your last words: "${lastWords.slice(0, 400) || '(nothing yet)'}"`,
      'Finish it with task_update (done | blocked | failed), or keep working on it.',
    ].join('\n');
    const at = new Date(now).toISOString();
    await b.annotate(cur.key, {
      [META.nudges]: state.nudges + 1,
      [META.lastNudge]: at,
      [META.nudgeLog]: [...log.filter((t) => now - t < this.cfg.hourMs), now],
    });
    b.notify('reminder', { taskId: task.id, nudge: state.nudges + 1, at, text });
    b.log.info({ taskId: task.id, nudge: state.nudges + 1 }, 'reminding the session');
    // Each reminder is a span in the task's trace.
    await inSpan(
      'reminder',
      {
        parent: contextFromTraceparent(md[META.traceparent]),
        attributes: { 'shrooms.task_id': task.id, 'shrooms.nudge': state.nudges + 1 },
      },
      () => b.remind(cur.key, text),
    );
  }

  private async stall(key: string, now: number): Promise<void> {
    const b = this.bridge;
    const at = new Date(now).toISOString();
    const s = await b.annotate(key, { [META.stalled]: at });
    b.notify('stalled', { taskId: s.entry.task.id, at, nudges: s.entry.task.metadata?.[META.nudges] });
    b.log.warn({ taskId: s.entry.task.id }, 'task stalled; the owner is notified and the session takes the next task');
    await b.release(key);
  }
}
