/**
 * Bounded by default (spec §11). Every limit the mesh enforces, with its default. Services read
 * overrides from their config (same names, `LIMIT_` prefix); past a limit the caller gets
 * `LIMIT_EXCEEDED` (or `QUEUE_FULL`) naming the limit, never a crash or silent truncation.
 */
export const DEFAULT_LIMITS = {
  /** HTTP request body, bytes. */
  bodyBytes: 128 * 1024,
  /** Text of one message, bytes (UTF-8). */
  textBytes: 64 * 1024,
  /**
   * Bytes of one file part (decoded) or data part (as JSON). A message as a whole is bounded by
   * the HTTP body limit (base64 makes a file a third larger on the wire).
   */
  partBytes: 64 * 1024,
  /** Parts in one message. */
  partsPerMessage: 16,
  /** Tasks of one session that are open (submitted, working, input-required). */
  openTasksPerSession: 100,
  /** Tasks waiting in one session's queue. */
  queueLength: 50,
  /** SSE streams open at once on one gateway. */
  sseStreams: 1000,
  /** SSE streams one device holds open at once on one gateway (a share, so one device cannot take all). */
  sseStreamsPerDevice: 200,
  /** Bytes of one SSE stream its client has not read yet; past it the stream ends (the client subscribes again). */
  sseBufferBytes: 1024 * 1024,
  /** Messages kept in one task's history. */
  historyPerTask: 64,
  /** Artifacts on one task. */
  artifactsPerTask: 16,
  /** Bytes of the whole task record (history, artifacts, metadata); below NATS max_payload. */
  taskBytes: 512 * 1024,
  /** Longest blocking SendMessage wait, ms. */
  blockingWaitMs: 10 * 60 * 1000,
  /** Blocking SendMessage waits one device holds at once on one gateway. */
  blockingWaitsPerDevice: 200,
  /** How long the gateway waits for a bridge to accept a task, ms. */
  deliveryAckMs: 5_000,
  /** How long the gateway waits for the guard, ms. */
  guardTimeoutMs: 2_000,
  /** Open tasks expire this long after they were asked, ms (24 h). */
  taskExpiryMs: 24 * 60 * 60 * 1000,
  /** Finished tasks are kept this long, ms (a week). */
  finishedRetentionMs: 7 * 24 * 60 * 60 * 1000,
  /** Most tasks the ledger retains (its stream's max messages). */
  retainedTasks: 200_000,
  /** Metadata entries on one message or request. */
  metadataEntries: 64,
} as const;

export type Limits = { -readonly [K in keyof typeof DEFAULT_LIMITS]: number };
