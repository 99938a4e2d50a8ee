/**
 * The one table of error codes. Each entry maps once to its JSON-RPC code, its `google.rpc.ErrorInfo`
 * reason, its HTTP status for the HTTP+JSON binding, and whether a client may retry. A2A's own codes
 * (-32001…-32009) and JSON-RPC's (-32700…-32603) come first; ours start at -32050 and are listed in
 * README.md (a test keeps the two in step).
 */
export interface ErrorSpec {
  code: number;
  reason: string;
  http: number;
  /** google.rpc.Code name, used as `status` in REST error bodies. */
  status: string;
  retryable: boolean;
  /** One line for the documentation table. */
  doc: string;
}

const e = (code: number, reason: string, http: number, status: string, retryable: boolean, doc: string): ErrorSpec => ({
  code,
  reason,
  http,
  status,
  retryable,
  doc,
});

export const ERRORS = {
  // JSON-RPC 2.0
  PARSE_ERROR: e(-32700, 'PARSE_ERROR', 400, 'INVALID_ARGUMENT', false, 'The body is not valid JSON.'),
  INVALID_REQUEST: e(-32600, 'INVALID_REQUEST', 400, 'INVALID_ARGUMENT', false, 'Not a JSON-RPC 2.0 request object.'),
  METHOD_NOT_FOUND: e(-32601, 'METHOD_NOT_FOUND', 404, 'UNIMPLEMENTED', false, 'No such method (v1.0 names are PascalCase).'),
  INVALID_PARAMS: e(-32602, 'INVALID_PARAMS', 400, 'INVALID_ARGUMENT', false, 'Parameters do not match the method.'),
  INTERNAL: e(-32603, 'INTERNAL', 500, 'INTERNAL', true, 'An internal error; the request may be retried.'),
  // A2A v1.0
  TASK_NOT_FOUND: e(-32001, 'TASK_NOT_FOUND', 404, 'NOT_FOUND', false, 'No task with that id on this session.'),
  TASK_NOT_CANCELABLE: e(-32002, 'TASK_NOT_CANCELABLE', 400, 'FAILED_PRECONDITION', false, 'The task is already finished.'),
  PUSH_NOT_SUPPORTED: e(
    -32003,
    'PUSH_NOTIFICATION_NOT_SUPPORTED',
    400,
    'FAILED_PRECONDITION',
    false,
    'Push notifications are not offered.',
  ),
  UNSUPPORTED_OPERATION: e(-32004, 'UNSUPPORTED_OPERATION', 400, 'FAILED_PRECONDITION', false, "Not possible in the task's state."),
  CONTENT_TYPE_NOT_SUPPORTED: e(
    -32005,
    'CONTENT_TYPE_NOT_SUPPORTED',
    400,
    'INVALID_ARGUMENT',
    false,
    'A part or body of a media type not accepted.',
  ),
  INVALID_AGENT_RESPONSE: e(-32006, 'INVALID_AGENT_RESPONSE', 500, 'INTERNAL', false, 'The agent answered something invalid.'),
  EXTENDED_CARD_NOT_CONFIGURED: e(
    -32007,
    'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
    400,
    'FAILED_PRECONDITION',
    false,
    'There is no extended card.',
  ),
  EXTENSION_SUPPORT_REQUIRED: e(
    -32008,
    'EXTENSION_SUPPORT_REQUIRED',
    400,
    'FAILED_PRECONDITION',
    false,
    'A required extension was not declared.',
  ),
  VERSION_NOT_SUPPORTED: e(-32009, 'VERSION_NOT_SUPPORTED', 400, 'FAILED_PRECONDITION', false, 'Only A2A-Version 1.0 and 0.3 are served.'),
  // shrooms
  LOOP_GUARD: e(
    -32050,
    'LOOP_GUARD',
    429,
    'RESOURCE_EXHAUSTED',
    true,
    'Too many new tasks from one device to one session within the window; retry after `retryAfterSeconds`.',
  ),
  CHAIN_TOO_DEEP: e(-32051, 'CHAIN_TOO_DEEP', 403, 'PERMISSION_DENIED', false, 'The ask chain would be deeper than allowed.'),
  CHAIN_CYCLE: e(-32052, 'CHAIN_CYCLE', 403, 'PERMISSION_DENIED', false, 'The ask chain would visit a session twice.'),
  NOT_ALLOWED: e(-32053, 'NOT_ALLOWED', 403, 'PERMISSION_DENIED', false, "The session's allow-list does not admit this device or agent."),
  UNKNOWN_DEVICE: e(-32054, 'UNKNOWN_DEVICE', 403, 'PERMISSION_DENIED', false, 'The source address is not a device of the mesh.'),
  GUARD_UNAVAILABLE: e(-32055, 'GUARD_UNAVAILABLE', 503, 'UNAVAILABLE', true, 'The guard did not answer in time; nothing was admitted.'),
  SESSION_NOT_FOUND: e(-32056, 'SESSION_NOT_FOUND', 404, 'NOT_FOUND', false, 'No such session on this machine.'),
  LIMIT_EXCEEDED: e(
    -32057,
    'LIMIT_EXCEEDED',
    413,
    'RESOURCE_EXHAUSTED',
    false,
    'A documented limit was reached; `limit` and `max` say which.',
  ),
  MESSAGE_ID_CONFLICT: e(
    -32058,
    'MESSAGE_ID_CONFLICT',
    409,
    'ALREADY_EXISTS',
    false,
    'That message id already names another task (another device asked, or with other content).',
  ),
  BUDGET_EXCEEDED: e(-32059, 'BUDGET_EXCEEDED', 429, 'RESOURCE_EXHAUSTED', true, 'The asking agent used its hourly budget of new tasks.'),
  UPDATE_FORBIDDEN: e(
    -32060,
    'UPDATE_FORBIDDEN',
    403,
    'PERMISSION_DENIED',
    false,
    'Only the worker session on its own machine may update a task.',
  ),
  BRIDGE_UNAVAILABLE: e(-32061, 'BRIDGE_UNAVAILABLE', 503, 'UNAVAILABLE', true, "The session's bridge did not answer in time."),
  SCHEDULER_UNAVAILABLE: e(-32062, 'SCHEDULER_UNAVAILABLE', 503, 'UNAVAILABLE', true, 'The scheduler is not running.'),
  QUEUE_FULL: e(-32063, 'QUEUE_FULL', 429, 'RESOURCE_EXHAUSTED', true, "The session's queue is full; retry later."),
  SCHEDULE_NOT_FOUND: e(-32064, 'SCHEDULE_NOT_FOUND', 404, 'NOT_FOUND', false, 'No schedule with that id.'),
  ACTION_FORBIDDEN: e(
    -32065,
    'ACTION_FORBIDDEN',
    403,
    'PERMISSION_DENIED',
    false,
    'This device may not do that to this task or session; `action` and `rule` say which rule (docs/security.md).',
  ),
  NATS_UNAVAILABLE: e(
    -32066,
    'NATS_UNAVAILABLE',
    503,
    'UNAVAILABLE',
    true,
    'NATS or JetStream did not answer. Retry after `retryAfterSeconds` (`Retry-After`): nothing was changed, except when a blocking send lost NATS while it waited on its task, which is kept (`taskId`; the same message again follows it).',
  ),
  CHAIN_PARENT_INVALID: e(
    -32067,
    'CHAIN_PARENT_INVALID',
    403,
    'PERMISSION_DENIED',
    false,
    '`shrooms/parent` does not name an open task that a session of the asking device works on.',
  ),
  CROSS_SITE_REFUSED: e(
    -32068,
    'CROSS_SITE_REFUSED',
    403,
    'PERMISSION_DENIED',
    false,
    'A foreign `Origin`, a `Host` that is not this gateway, or a state change without a JSON body; `check` says which.',
  ),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorKey = keyof typeof ERRORS;

export const ERROR_DOMAIN = 'a2a-protocol.org';
export const SHROOMS_ERROR_DOMAIN = 'shrooms.mesh';

/**
 * The setting that raises each limit a refusal can name (`details.limit`): a person who meets a
 * limit is told which knob it is. The loop guard and the budget name theirs by error key.
 */
export const LIMIT_SETTINGS: Readonly<Record<string, string>> = {
  bodyBytes: 'LIMIT_BODY_BYTES',
  textBytes: 'LIMIT_TEXT_BYTES',
  partBytes: 'LIMIT_PART_BYTES',
  partsPerMessage: 'LIMIT_PARTS_PER_MESSAGE',
  metadataEntries: 'LIMIT_METADATA_ENTRIES',
  sseStreams: 'LIMIT_SSE_STREAMS',
  sseStreamsPerDevice: 'LIMIT_SSE_STREAMS_PER_DEVICE',
  sseBufferBytes: 'LIMIT_SSE_BUFFER_BYTES',
  blockingWaitsPerDevice: 'LIMIT_BLOCKING_WAITS_PER_DEVICE',
  dashboardStreams: 'DASHBOARD_MAX_STREAMS',
  queueLength: 'LIMIT_QUEUE_LENGTH',
  openTasksPerSession: 'LIMIT_OPEN_TASKS',
  taskBytes: 'LIMIT_TASK_BYTES',
  retainedTasks: 'LIMIT_RETAINED_TASKS',
  recipients: 'LIMIT_RECIPIENTS',
  schedules: 'LIMIT_SCHEDULES',
  minIntervalMs: 'SCHEDULER_MIN_INTERVAL_MS',
  LOOP_GUARD: 'GUARD_RATE_MAX',
  BUDGET_EXCEEDED: 'GUARD_BUDGET_MAX',
};

/**
 * How long a retryable refusal tells a client to wait (`Retry-After`) when the error itself does
 * not say (`details.retryAfterSeconds`, as the loop guard does), s.
 */
export const RETRY_AFTER_SECONDS: Readonly<Partial<Record<string, number>>> = {
  GUARD_UNAVAILABLE: 2,
  NATS_UNAVAILABLE: 2,
  BRIDGE_UNAVAILABLE: 5,
  SCHEDULER_UNAVAILABLE: 10,
  QUEUE_FULL: 30,
  LOOP_GUARD: 60,
  BUDGET_EXCEEDED: 60,
  INTERNAL: 1,
};

/** A local error with a stable key; the edges turn it into the wire form. */
export class ShroomsError extends Error {
  readonly key: ErrorKey;
  readonly details: Record<string, string | number>;
  constructor(key: ErrorKey, message: string, details: Record<string, string | number> = {}) {
    // Named once here, so every limit's refusal says what raises it (also after crossing NATS).
    const setting = details.setting === undefined ? (LIMIT_SETTINGS[String(details.limit)] ?? LIMIT_SETTINGS[key]) : undefined;
    super(setting ? `${message} (raise it with ${setting})` : message);
    this.name = 'ShroomsError';
    this.key = key;
    this.details = setting ? { ...details, setting } : details;
  }
  /** Seconds to wait before retrying, for a retryable error; undefined when it may not be retried. */
  get retryAfterSeconds(): number | undefined {
    if (!this.retryable) return undefined;
    const s = Number(this.details.retryAfterSeconds ?? RETRY_AFTER_SECONDS[this.key] ?? 1);
    return Number.isFinite(s) ? Math.max(1, Math.ceil(s)) : 1;
  }
  get spec(): ErrorSpec {
    return ERRORS[this.key];
  }
  get retryable(): boolean {
    return ERRORS[this.key].retryable;
  }
}

export function isShroomsError(e: unknown): e is ShroomsError {
  return e instanceof ShroomsError;
}

function domainOf(spec: ErrorSpec): string {
  return spec.code <= -32050 && spec.code >= -32099 ? SHROOMS_ERROR_DOMAIN : ERROR_DOMAIN;
}

export function errorInfo(err: ShroomsError): Record<string, unknown> {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(err.details)) metadata[k] = String(v);
  return {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: err.spec.reason,
    domain: domainOf(err.spec),
    ...(Object.keys(metadata).length ? { metadata } : {}),
  };
}

/** JSON-RPC `error` member. */
export function toJsonRpcError(err: ShroomsError): { code: number; message: string; data: unknown[] } {
  return { code: err.spec.code, message: err.message, data: [errorInfo(err)] };
}

/** `google.rpc.Status` body for the HTTP+JSON binding. */
export function toRestError(err: ShroomsError): { error: { code: number; status: string; message: string; details: unknown[] } } {
  return { error: { code: err.spec.http, status: err.spec.status, message: err.message, details: [errorInfo(err)] } };
}

/** Wire form that travels inside NATS replies (service error headers carry the code too). */
export interface WireError {
  key: ErrorKey;
  message: string;
  details?: Record<string, string | number>;
}

export function toWireError(err: ShroomsError): WireError {
  return { key: err.key, message: err.message, details: err.details };
}

export function fromWireError(w: WireError): ShroomsError {
  const key = (w.key in ERRORS ? w.key : 'INTERNAL') as ErrorKey;
  return new ShroomsError(key, w.message, w.details ?? {});
}

export function errorByCode(code: number): ErrorKey | undefined {
  return (Object.keys(ERRORS) as ErrorKey[]).find((k) => ERRORS[k].code === code);
}

/** The error a caller sees when a NATS service did not answer. */
export function requestTimeoutError(key: 'BRIDGE_UNAVAILABLE' | 'GUARD_UNAVAILABLE' | 'SCHEDULER_UNAVAILABLE', what: string): ShroomsError {
  const msg = {
    BRIDGE_UNAVAILABLE: `the bridge of ${what} did not answer`,
    GUARD_UNAVAILABLE: `the guard did not answer about ${what}; nothing was admitted`,
    SCHEDULER_UNAVAILABLE: `the scheduler is not running (${what})`,
  }[key];
  return new ShroomsError(key, msg);
}
