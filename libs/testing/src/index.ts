export * from './nats-server.js';
export * from './processes.js';
export * from './fake-model/index.js';
export * from './mesh.js';
export * from './chaos/index.js';
export * from './otlp/receiver.js';
export * from './machines/index.js';
