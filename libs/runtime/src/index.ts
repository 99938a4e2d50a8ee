export {
  type BaseConfig,
  BaseConfigSchema,
  ConfigError,
  envBool,
  loadConfig,
  redactConfig,
  RENAMED_SETTINGS,
  withRenamedSettings,
} from './config.js';
export { ANSWER_DELAY_MS, Answers } from './answers.js';
export { createLogger, type Logger } from './log.js';
export { formatLogLine } from './log-format.js';
export { humanDuration } from './duration.js';
export { releaseMemoryWhenIdle } from './idle-memory.js';
export { keepWatching, type KeepWatchingOptions, type OpenWatch } from './keep-watching.js';
export { NATS_LINK_GRACE_MS, NatsLink, type LinkState } from './nats-link.js';
export { connectNats, drainNats, type NatsConnection, onShutdown } from './nats.js';
export {
  NO_REPLY,
  REPLY_TAKEN,
  addService,
  jsonEndpoint,
  quietRequests,
  requestJson,
  subscriptionsTaken,
  type QuietRequest,
  type Service,
  type ServiceMsg,
  type ServiceSpec,
} from './service.js';
export {
  healthProbe,
  type HealthCheck,
  type HealthChecks,
  type HealthConfig,
  HealthConfigSchema,
  healthKey,
  type HealthReport,
  type HealthServer,
  type HealthServerOptions,
  natsHealthChecks,
  type NatsHealthOptions,
  natsLiveness,
  startHealthServer,
} from './health.js';
export {
  activeContext,
  type Attributes,
  type Context,
  contextFromHeaders,
  contextFromTraceparent,
  contextWithSpan,
  flushTelemetry,
  initTelemetry,
  inSpan,
  inTrace,
  type Span,
  SpanKind,
  SpanStatusCode,
  startSpan,
  traceHeaders,
  traceparentOf,
} from './telemetry.js';
export { casCreate, casPurge, casPut, casUpdate, isCasConflict, isStreamFull } from './cas.js';
export { keysNow } from './keys-now.js';
export {
  hasJetStreamApiCode,
  isMadeMeanwhile,
  isNatsOutage,
  isPermissionViolation,
  isTransientJetStreamError,
  natsUnavailable,
  retryJetStream,
  transientOrMadeMeanwhile,
} from './retry.js';
export { answerBeforeTheRest, linger } from './http-linger.js';
export { watchFile } from './watch-file.js';
export { pidHasArg, pidRuns } from './process.js';
