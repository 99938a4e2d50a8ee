/**
 * Following a task until it is finished or needs input, or until the caller's deadline: a
 * `SubscribeToTask` stream (the gateway sends the task, then every change, with heartbeats), opened
 * again if it drops, with `GetTask` for the truth at the start and the end.
 *
 * Why not a blocking `SendMessage`: its answer may take 10 minutes, and Node's fetch gives up on
 * response headers after 5; a stream with heartbeats has no such limit and shows every change.
 */
import { isInterrupted, isTerminal, type StreamResponse, type Task } from '@shrooms/protocol';

export const DEFAULT_WAIT_MS = 10 * 60 * 1000;

export interface WaitOptions {
  /** How long to follow the task, ms (default 10 min). */
  timeoutMs?: number;
  /** Called with the task each time it changes. */
  onUpdate?: (task: Task) => void;
  signal?: AbortSignal;
  /** Pause before opening a dropped stream again, ms (default 1 s); doubled after each failed read, up to 15 s. */
  retryMs?: number;
}

/** Longest pause between reads of a task whose gateway does not answer (restarting, NATS away), ms. */
export const MAX_RETRY_MS = 15_000;

export interface WaitResult {
  task: Task;
  /** True when the task finished or needs input; false when the wait ended first. */
  settled: boolean;
}

export interface WaitPort {
  get(): Promise<Task>;
  /** Events of the task from now on, the current task first; throws when there is nothing to follow. */
  subscribe(signal: AbortSignal): AsyncIterable<StreamResponse>;
}

export const isSettled = (t: Task): boolean => isTerminal(t.status.state) || isInterrupted(t.status.state);

/** Folds one stream event into the task as last seen. */
export function applyEvent(task: Task, ev: StreamResponse): Task {
  if ('task' in ev) return ev.task;
  if ('statusUpdate' in ev) {
    const u = ev.statusUpdate;
    return { ...task, status: u.status, metadata: { ...task.metadata, ...u.metadata } };
  }
  if ('artifactUpdate' in ev) {
    const a = ev.artifactUpdate.artifact;
    const rest = (task.artifacts ?? []).filter((x) => x.artifactId !== a.artifactId);
    return { ...task, artifacts: [...rest, a] };
  }
  return task;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/** Retryability is a field on the error (GatewayUnreachableError, ShroomsError). */
const isRetryable = (e: unknown): boolean => (e as { retryable?: unknown } | null)?.retryable === true;

export async function waitForTask(port: WaitPort, opts: WaitOptions = {}, initial?: Task): Promise<WaitResult> {
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_WAIT_MS);
  const retryMs = opts.retryMs ?? 1_000;
  let task = initial ?? (await port.get());
  // A change worth telling: the state, or metadata such as queued, stalled, acknowledged.
  const keyOf = (t: Task) => `${t.status.state}|${JSON.stringify(t.metadata ?? {})}`;
  let lastSeen = keyOf(task);
  const seen = (t: Task) => {
    task = t;
    const key = keyOf(t);
    if (key !== lastSeen) {
      lastSeen = key;
      opts.onUpdate?.(t);
    }
  };
  opts.onUpdate?.(task);
  let failures = 0;

  while (!isSettled(task) && Date.now() < deadline && !opts.signal?.aborted) {
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), Math.max(0, deadline - Date.now()));
    const onAbort = () => stop.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const ev of port.subscribe(stop.signal)) {
        seen(applyEvent(task, ev));
        if (isSettled(task)) break;
      }
    } catch {
      // handled below: the task is read again
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
    if (isSettled(task) || Date.now() >= deadline || opts.signal?.aborted) break;
    // The stream ended or failed with the task still open. A terminal task cannot be subscribed to;
    // a dropped stream is opened again. The truth comes from GetTask. When that fails too with a
    // retryable error (the gateway restarting, NATS failing over), the task goes on without us:
    // keep trying, backing off, until the deadline; other errors are the caller's.
    try {
      seen(await port.get());
      failures = 0;
    } catch (e) {
      if (!isRetryable(e)) throw e;
      failures++;
    }
    const pause = Math.min(retryMs * 2 ** failures, Math.max(retryMs, MAX_RETRY_MS));
    if (!isSettled(task)) await sleep(Math.min(pause, Math.max(0, deadline - Date.now())), opts.signal);
  }
  // The stream shows changes; the whole task (history, artifacts, metadata) comes from the ledger,
  // or, when it cannot be read, the task as last seen.
  const final = await port.get().catch(() => task);
  seen(final);
  return { task: final, settled: isSettled(final) };
}
