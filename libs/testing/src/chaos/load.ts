/**
 * A steady load of asks for chaos tests: a bounded number of SendMessage calls, a bounded number
 * at a time, each with its own message id. A failed ask (no answer, a dropped connection, a
 * retryable error) is sent again with the SAME message id until it returns a task — the retry a
 * real client makes, and the one the mesh promises is safe. Every attempt's errors are kept with
 * their times so a test can say which requests were in flight when a fault hit.
 */

export interface AskError {
  /** When the failed attempt was sent and when it failed (ms since epoch). */
  startedAt: number;
  at: number;
  kind: 'network' | 'timeout' | 'http' | 'rpc';
  /** JSON-RPC error code or HTTP status. */
  code?: number;
  message: string;
}

export interface AskRecord {
  index: number;
  session: string;
  messageId: string;
  text: string;
  /** Waited for the task to finish (blocking SendMessage) rather than returning at once. */
  blocking: boolean;
  taskId?: string;
  contextId?: string;
  /** State in the answer that acknowledged the ask. */
  state?: string;
  attempts: number;
  ackedAt?: number;
  errors: AskError[];
  /** A non-retryable error: the ask was given up. */
  refused?: AskError;
  /** The answer named another task than `SESSION:MESSAGE-ID`. */
  mismatch?: string;
}

export interface AskLoadOptions {
  gatewayUrl: string;
  sessions: string[];
  count: number;
  concurrency: number;
  /** Message ids are `${prefix}-${index}`; use one prefix per phase. */
  prefix: string;
  /** One ask in `blockingEvery` waits for the task to finish; the others return at once. Default 4. */
  blockingEvery?: number;
  /** Pause of each worker between asks, ms, so the load is steady rather than a burst. Default 10. */
  pauseMs?: number;
  /** Bound on one attempt, ms (a hang shows as a timeout, never as a stuck test). Default 30 000. */
  requestTimeoutMs?: number;
  /** Wait before sending a failed ask again, ms. Default 250. */
  retryDelayMs?: number;
  /** Stop retrying one ask after this long, ms. Default 120 000. */
  giveUpMs?: number;
  /** Which JSON-RPC error codes are worth a retry. Default: internal, guard/bridge/NATS unavailable, queue full. */
  retryable?: (code: number) => boolean;
  text?: (index: number) => string;
}

const DEFAULT_RETRYABLE = new Set([-32603, -32055, -32061, -32063, -32066]);

export interface AskAnswer {
  task?: { id: string; contextId: string; status: { state: string } };
  error?: AskError;
}

/** One JSON-RPC SendMessage as a plain client sends it; errors come back as values, never thrown. */
export async function sendAsk(
  gatewayUrl: string,
  session: string,
  messageId: string,
  text: string,
  opts: { blocking?: boolean; timeoutMs?: number } = {},
): Promise<AskAnswer> {
  const startedAt = Date.now();
  const fail = (kind: AskError['kind'], message: string, code?: number): AskAnswer => ({
    error: { startedAt, at: Date.now(), kind, message, ...(code !== undefined ? { code } : {}) },
  });
  try {
    const res = await fetch(`${gatewayUrl}/a2a/${session}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: messageId,
        method: 'SendMessage',
        params: { message: { messageId, role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: !opts.blocking } },
      }),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    });
    const body = (await res.json().catch(() => undefined)) as
      { result?: { task?: AskAnswer['task'] }; error?: { code: number; message: string } } | undefined;
    if (res.status !== 200) return fail('http', `HTTP ${res.status}`, res.status);
    if (body?.error) return fail('rpc', body.error.message, body.error.code);
    if (!body?.result?.task) return fail('http', 'no task in the answer');
    return { task: body.result.task };
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return fail('timeout', e.message);
    return fail('network', (e.cause as Error | undefined)?.message ?? e.message);
  }
}

export class AskLoad {
  readonly records: AskRecord[] = [];
  acked = 0;
  private next = 0;
  private stopped = false;
  private waiters: { n: number; resolve: () => void }[] = [];

  constructor(readonly o: AskLoadOptions) {}

  /** Runs every ask to an answer (or gives up per `giveUpMs`); resolves with the records. */
  async run(): Promise<AskRecord[]> {
    const workers = Array.from({ length: this.o.concurrency }, () => this.worker());
    await Promise.all(workers);
    for (const w of this.waiters) w.resolve();
    return this.records;
  }

  /** Resolves once `n` asks have been acknowledged (or the load ended). */
  whenAcked(n: number): Promise<void> {
    if (this.acked >= n || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  /** No new asks after the ones in flight. */
  stop(): void {
    this.stopped = true;
  }

  get errors(): AskError[] {
    return this.records.flatMap((r) => r.errors);
  }

  summary(): {
    asks: number;
    acknowledged: number;
    refused: number;
    clientErrors: number;
    retried: number;
    mismatches: number;
    errorsByKind: Record<string, number>;
  } {
    const errorsByKind: Record<string, number> = {};
    for (const e of this.errors) {
      const k = e.code !== undefined ? `${e.kind} ${e.code}` : e.kind;
      errorsByKind[k] = (errorsByKind[k] ?? 0) + 1;
    }
    return {
      asks: this.records.length,
      acknowledged: this.records.filter((r) => r.taskId).length,
      refused: this.records.filter((r) => r.refused).length,
      clientErrors: this.errors.length,
      retried: this.records.filter((r) => r.attempts > 1).length,
      mismatches: this.records.filter((r) => r.mismatch).length,
      errorsByKind,
    };
  }

  private async worker(): Promise<void> {
    const blockingEvery = this.o.blockingEvery ?? 4;
    const retryable = this.o.retryable ?? ((c: number) => DEFAULT_RETRYABLE.has(c) || c >= 500);
    while (!this.stopped && this.next < this.o.count) {
      const index = this.next++;
      const session = this.o.sessions[index % this.o.sessions.length]!;
      const rec: AskRecord = {
        index,
        session,
        messageId: `${this.o.prefix}-${index}`,
        text: this.o.text?.(index) ?? `ask ${index} of ${this.o.prefix}`,
        blocking: index % blockingEvery === 0,
        attempts: 0,
        errors: [],
      };
      this.records.push(rec);
      const giveUpAt = Date.now() + (this.o.giveUpMs ?? 120_000);
      while (Date.now() < giveUpAt) {
        rec.attempts++;
        const a = await sendAsk(this.o.gatewayUrl, session, rec.messageId, rec.text, {
          blocking: rec.blocking,
          timeoutMs: this.o.requestTimeoutMs,
        });
        if (a.task) {
          rec.taskId = a.task.id;
          rec.contextId = a.task.contextId;
          rec.state = a.task.status.state;
          rec.ackedAt = Date.now();
          if (a.task.id !== `${session}:${rec.messageId}`) rec.mismatch = a.task.id;
          this.acked++;
          this.waiters = this.waiters.filter((w) => (this.acked >= w.n ? (w.resolve(), false) : true));
          break;
        }
        rec.errors.push(a.error!);
        if (a.error!.kind === 'rpc' && !retryable(a.error!.code!)) {
          rec.refused = a.error;
          break;
        }
        await new Promise((r) => setTimeout(r, this.o.retryDelayMs ?? 250));
      }
      if (this.o.pauseMs !== 0) await new Promise((r) => setTimeout(r, this.o.pauseMs ?? 10));
    }
  }
}
