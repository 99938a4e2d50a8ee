/**
 * @shrooms/client — the one client of the mesh (MCP tools, `shrooms-agent a2a`, scripts): targets,
 * gateways, standard A2A through `@a2a-js/sdk`, our task extension, the scheduler.
 */
export { ShroomsClient, isFinished, type ListInput, type ScheduleInput, type SendInput, type Sent, type Target } from './client.js';
export { AgentInfoSchema, gatewayFor, resolveTarget, type AgentInfo } from './agents.js';
export { GatewayUnreachableError, fromJsonRpcError, isGatewayUnreachable, isNetworkError, normalizeError } from './errors.js';
export { GatewayWire, type GatewayWireOptions } from './http.js';
export {
  ClientEnvSchema,
  DEFAULT_GATEWAY_URL,
  clientOptionsFromEnv,
  isTraceparent,
  parseGatewayMap,
  type ClientEnv,
  type ClientOptions,
  type NatsSettings,
} from './options.js';
export { agentRef, isTaskName, newMessageId, parseAgentName, parseTaskRef, taskRef, type AgentRef, type TaskRef } from './refs.js';
export { ScheduleViewSchema, describeSchedule, type ScheduleView, type SchedulerOp, type SchedulerPort } from './schedules.js';
export { askGuard, guardControl, guardRefusal, type AskGuardOptions, type GuardAdmitInput } from './nats/guard.js';
export { bridgeClient, type BridgeClient } from './nats/bridge.js';
export { scheduleClient, type ScheduleClient } from './nats/scheduler.js';
export { scheduleAsTask, scheduleIdForMessage, scheduleRequestFromSendMessage, type SendMessageTarget } from './schedule-message.js';
export { TaskSummarySchema, describeTask, heldText, replyOf, shortState, summarize, type TaskSummary } from './summary.js';
export { DEFAULT_WAIT_MS, applyEvent, isSettled, waitForTask, type WaitOptions, type WaitPort, type WaitResult } from './wait.js';
export { returnedParts } from './parts.js';
export { type QueuedWatch, watchQueued, whyQueued } from './queued.js';
export { localZone, resolveAt } from './local-time.js';
