/** What the orchestrator asks the load generator to do (IPC messages), and what it answers. */

/** An A2A JSON-RPC endpoint (ours or the reference); `tenant` goes into params when set. */
export interface HttpTarget {
  kind: 'http';
  url: string;
  /** Several endpoints (sessions): each request goes to the next one, round robin. */
  urls?: string[];
  tenant?: string;
}

/** The floor: core NATS request-reply through two responders; sizes match what ours sends and gets. */
export interface NatsTarget {
  kind: 'nats';
  url: string;
  requestBytes: number;
  replyBytes: number;
}

export type Target = HttpTarget | NatsTarget;

/**
 * send: blocking SendMessage; send_nb: SendMessage with returnImmediately; stream: SendStreamingMessage
 * (first event timed); get: GetTask of a random shelf task; list: ListTasks, one page.
 */
export type Op = 'send' | 'send_nb' | 'stream' | 'get' | 'list';

export interface LatencyJob {
  type: 'latency';
  target: Target;
  op: Op;
  /** Requests to time, one at a time. */
  n: number;
  /** Stop early after this long (slow arms on big ledgers); at least `minN` are still timed. */
  maxMs: number;
  minN?: number;
  /** For get: shelf tasks 0..shelf-1 exist. */
  shelf?: number;
  pageSize?: number;
}

export interface ThroughputJob {
  type: 'throughput';
  target: Target;
  op: 'send' | 'send_nb';
  concurrency: number;
  durationMs: number;
  maxTasks: number;
  /** For send_nb: also wait until every accepted task is finished and time that. */
  drainTimeoutMs: number;
}

export interface LatencyResult {
  samples: number[];
  errors: number;
  firstError?: string;
  /** Bytes of the first request body and response (sizes the floor). */
  requestBytes: number;
  responseBytes: number;
  /** Load generator CPU over the job, % of one core. */
  cpuPct: number;
  /** SSE only: time to the end of the stream, ms. */
  totals?: number[];
}

export interface ThroughputResult {
  done: number;
  errors: number;
  firstError?: string;
  elapsedMs: number;
  perS: number;
  cpuPct: number;
  /** send_nb: every accepted task finished after this long from the start, ms (null: timed out). */
  drainedMs?: number | null;
  drainedPerS?: number | null;
}
