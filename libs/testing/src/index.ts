export * from './nats-server.js';
export * from './processes.js';
