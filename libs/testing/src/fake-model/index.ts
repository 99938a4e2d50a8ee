export {
  startFakeModel,
  type FakeApi,
  type FakeModel,
  type FakeModelOptions,
  type RecordedRequest,
  type RespondContext,
} from './server.js';
export {
  nest,
  parseScript,
  plan,
  resolveToolName,
  say,
  substitute,
  summarize,
  taskIdOf,
  chain,
  useTool,
  type Conversation,
  type Entry,
  type Reply,
  type Script,
  type Step,
} from './script.js';
export type { StreamPace } from './pace.js';
