export { type NatsWithConnection, startNatsWithConnection } from './nats-connection.js';
export { NATS_SERVER_ENV, natsServerBinary, type NatsServerHandle, type StartNatsOptions, startNatsServer } from './nats-server.js';
export { type NatsProxy, startNatsProxy } from './nats-proxy.js';
export { builtFile, eventually, nodeArgs, REPO_ROOT, runTs, type Built, type ServiceProcess, wrap } from './processes.js';
export { freePort } from './ports.js';
export { leftByRun, TEST_RUN_ENV, tempDir, type TempDir, tempDirSync } from './temp.js';
export { heapKeptPerItem, inTsNode } from './child-heap.js';
export { inChildNode, selfSignedCert, type SelfSigned } from './tls.js';
export { parseUpOutput, type UpPrinted } from './up-output.js';
export { sendsInFlight } from './scheduler-log.js';
export { idleSignal } from './signal.js';
export {
  chain,
  type Conversation,
  type Entry,
  type FakeApi,
  type FakeModel,
  type FakeModelOptions,
  nest,
  parseScript,
  plan,
  type RecordedRequest,
  type Reply,
  resolveToolName,
  type RespondContext,
  say,
  type Script,
  startFakeModel,
  type Step,
  type StreamPace,
  substitute,
  summarize,
  taskIdOf,
  useTool,
} from './fake-model/index.js';
export { CLI, type Mesh, type MeshOptions, rpc, startMesh } from './mesh.js';
export {
  type AskAnswer,
  type AskError,
  AskLoad,
  type AskLoadOptions,
  type AskRecord,
  buildRawRequest,
  CHAOS_OUTPUT_DIR,
  type ChaosRow,
  chaosRunId,
  type ChaosSummary,
  childProcesses,
  type ClusterNode,
  formatChaosTable,
  isAlive,
  isRunning,
  kbIn,
  liveMemory,
  type LiveMemory,
  MEMORY_PROBE,
  mib,
  type NatsCluster,
  rawExchange,
  type RawExchangeOptions,
  type RawRequest,
  type RawResponse,
  recordChaosRows,
  reportChaos,
  rssBytes,
  sendAsk,
  socketCount,
  startNatsCluster,
} from './chaos/index.js';
export { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './otlp/receiver.js';
export {
  type FetchResult,
  readEnvFile,
  readUnit,
  type Rig,
  type RigMachine,
  type RigMachineSpec,
  type RigOptions,
  rigUnavailable,
  startRig,
  sweepRig,
  type UnitCommand,
} from './machines/index.js';
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
export { type LocalNats, prepareLocalNats, privateDir, privateFile, type Role } from './nats-users.js';
export { type Netns, type NetnsDevice, type NetnsResponse, netnsUnavailable, startNetns } from './netns/netns.js';
