export * from './nats-server.js';
export * from './processes.js';
export * from './fake-model/index.js';
export * from './mesh.js';
export * from './chaos/index.js';
export * from './otlp/receiver.js';
export * from './machines/index.js';
export {
  DOCKER_BIN,
  DOCKER_COMPOSE_BIN,
  dockerEngineUnavailable,
  startDockerEngine,
  unmountUnder,
  type DockerEngine,
  type StartDockerOptions,
} from './docker/engine.js';
export { run, type RunOptions } from './docker/exec.js';
export { baseImageTag, BASE_NODE_VERSION, buildNatsImage, dockerCacheDir, ensureBaseTarball, importBaseImage } from './docker/images.js';
export * from './nats-users.js';
export * from './netns/netns.js';
