/**
 * Answers to reply-to subjects nobody waits on, sent together: the ledger watch's to each change it
 * brings (libs/ledger watch.ts `answer`) and a quiet endpoint's to each request it takes without a
 * reply (service.ts `jsonEndpoint`). nats-server forgets a subject it tracks for a user only on
 * seeing it answered, so instead of one socket write (and one read by the server) per message, the
 * answers gathered within `ANSWER_DELAY_MS` leave in one. A subject answered that late is still well
 * inside the users' reply window (5 s, deploy/nats), and the server holds at most the rate times the
 * delay of them unanswered (50 at 1,000 a second), far under the 4,096 where it starts walking.
 */

/** How long an answer may wait for others to leave with it (ms). */
export const ANSWER_DELAY_MS = 50;
/** Answers waiting that go at once without waiting for the delay. */
export const ANSWER_BATCH = 512;

export class Answers {
  private pending: (() => void)[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly delayMs = ANSWER_DELAY_MS,
    private readonly batch = ANSWER_BATCH,
  ) {}

  /** Sends `answer` with the next batch. */
  add(answer: () => void): void {
    this.pending.push(answer);
    if (this.pending.length >= this.batch) this.flush();
    // Unref'd: answers waiting never keep a process alive that has nothing else to do.
    else this.timer ??= setTimeout(() => this.flush(), this.delayMs).unref();
  }

  /** Sends every answer waiting now (a watch that stops sends its last ones). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const answers = this.pending;
    this.pending = [];
    for (const a of answers) {
      try {
        a();
      } catch {
        // The connection closed: the server forgot the subject with it.
      }
    }
  }
}
