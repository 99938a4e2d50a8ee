export * from './config.js';
export * from './log.js';
export * from './nats.js';
export * from './service.js';
export * from './health.js';
export * from './telemetry.js';
export * from './retry.js';
export * from './watch-file.js';
