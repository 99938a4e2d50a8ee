/**
 * A2A v0.3 beside v1.0 (amendments, "client reach"): the v0.3 JSON-RPC method names and shapes,
 * turned into v1.0 on the way in and back on the way out. The ledger holds v1.0 only, so a task
 * asked in v0.3 reads the same in v1.0 and back. v0.3 shapes: `kind` on every object and part
 * (`text` | `file` {bytes|uri, name, mimeType} | `data`), lower-case states and roles, `final` on
 * status updates; `message/send` answers the Task itself (v1.0 wraps it in `{task}`).
 */
import { z } from 'zod';
import {
  ShroomsError,
  V03_STATES,
  isInterrupted,
  isTerminal,
  type Artifact,
  type Message,
  type Part,
  type StreamResponse,
  type Task,
  type TaskState,
  type TaskStatus,
  type TaskStatusUpdateEvent,
} from '@shrooms/protocol';

/** v0.3 method → the v1.0 method it is served by. */
export const V03_METHODS: Readonly<Record<string, string>> = {
  'message/send': 'SendMessage',
  'message/stream': 'SendStreamingMessage',
  'tasks/get': 'GetTask',
  'tasks/cancel': 'CancelTask',
  'tasks/resubscribe': 'SubscribeToTask',
  'tasks/pushNotificationConfig/set': 'CreateTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/get': 'GetTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/list': 'ListTaskPushNotificationConfigs',
  'tasks/pushNotificationConfig/delete': 'DeleteTaskPushNotificationConfig',
  'agent/getAuthenticatedExtendedCard': 'GetExtendedAgentCard',
};

/** `metadata` as both v0.3 bindings carry it. */
export const V03Meta = z.record(z.string(), z.unknown()).optional();
const Meta = V03Meta;
/** `configuration` of a v0.3 send, on both bindings. */
export const V03ConfigurationSchema = z
  .object({
    acceptedOutputModes: z.array(z.string()).optional(),
    historyLength: z.number().int().min(0).optional(),
    blocking: z.boolean().optional(),
  })
  .loose();
const FileSchema = z.union([
  z.object({ bytes: z.string(), name: z.string().optional(), mimeType: z.string().optional() }),
  z.object({ uri: z.string(), name: z.string().optional(), mimeType: z.string().optional() }),
]);
const PartV03Schema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('text'), text: z.string(), metadata: Meta }),
  z.object({ kind: z.literal('file'), file: FileSchema, metadata: Meta }),
  z.object({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()), metadata: Meta }),
]);
type PartV03 = z.infer<typeof PartV03Schema>;

const MessageV03Schema = z
  .object({
    kind: z.literal('message').optional(),
    messageId: z.string(),
    role: z.enum(['user', 'agent']),
    parts: z.array(PartV03Schema),
    contextId: z.string().optional(),
    taskId: z.string().optional(),
    metadata: Meta,
    extensions: z.array(z.string()).optional(),
    referenceTaskIds: z.array(z.string()).optional(),
  })
  .loose();
type MessageV03 = z.infer<typeof MessageV03Schema>;

const SendParamsV03Schema = z
  .object({
    message: MessageV03Schema,
    configuration: V03ConfigurationSchema.extend({ pushNotificationConfig: z.unknown().optional() }).optional(),
    metadata: Meta,
  })
  .loose();

/** The INVALID_PARAMS of a v0.3 request that its schema refused: the first issue, where it is. */
export function invalidV03(err: z.ZodError, whole = '(params)'): ShroomsError {
  const first = err.issues[0]!;
  return new ShroomsError('INVALID_PARAMS', `invalid params: ${first.path.join('.') || whole}: ${first.message}`);
}

/**
 * A v0.3 part (JSON-RPC's form, which rest.ts renames for HTTP+JSON) → v1.0: file names and
 * media types, bytes or a link.
 */
export function partFromV03(p: PartV03): Part {
  const md = p.metadata ? { metadata: p.metadata } : {};
  if (p.kind === 'text') return { text: p.text, ...md };
  if (p.kind === 'data') return { data: p.data, ...md };
  const f = p.file;
  const named = { ...(f.name ? { filename: f.name } : {}), ...(f.mimeType ? { mediaType: f.mimeType } : {}), ...md };
  return 'bytes' in f ? { raw: f.bytes, ...named } : { url: f.uri, ...named };
}

/** A v1.0 part → v0.3 (JSON-RPC's form); data that is not an object travels wrapped as `{value}`. */
export function partToV03(p: Part): PartV03 {
  const md = p.metadata ? { metadata: p.metadata } : {};
  const named = { ...(p.filename ? { name: p.filename } : {}), ...(p.mediaType ? { mimeType: p.mediaType } : {}) };
  if (p.raw !== undefined) return { kind: 'file', file: { bytes: p.raw, ...named }, ...md };
  if (p.url !== undefined) return { kind: 'file', file: { uri: p.url, ...named }, ...md };
  if (p.data !== undefined) {
    // v0.3 data parts are objects; any other JSON value travels wrapped.
    const data =
      p.data !== null && typeof p.data === 'object' && !Array.isArray(p.data) ? (p.data as Record<string, unknown>) : { value: p.data };
    return { kind: 'data', data, ...md };
  }
  return { kind: 'text', text: p.text ?? '', ...md };
}

function messageFromV03(m: MessageV03): Message {
  const { kind: _kind, role, parts, ...rest } = m;
  return { ...rest, role: role === 'agent' ? 'ROLE_AGENT' : 'ROLE_USER', parts: parts.map(partFromV03) } as Message;
}

function messageToV03(m: Message): MessageV03 & { kind: 'message' } {
  const { role, parts, ...rest } = m;
  return { kind: 'message', ...rest, role: role === 'ROLE_AGENT' ? 'agent' : 'user', parts: parts.map(partToV03) };
}

/**
 * How a v0.3 binding writes messages, parts and states; the rest of a task's shape — what a status,
 * an artifact, a task and a stream event hold — the two bindings share (here and rest.ts).
 */
export interface V03Form {
  message(m: Message): Record<string, unknown>;
  part(p: Part): unknown;
  state(s: TaskState): string;
}

const JSONRPC: V03Form = { message: messageToV03, part: partToV03, state: (s) => V03_STATES[s] ?? 'unknown' };

function statusIn(form: V03Form, s: TaskStatus): Record<string, unknown> {
  return { ...s, state: form.state(s.state), ...(s.message ? { message: form.message(s.message) } : {}) };
}

/** An artifact in a v0.3 form. */
export function artifactIn(form: V03Form, a: Artifact): Record<string, unknown> {
  return { ...a, parts: a.parts.map((p) => form.part(p)) };
}

/**
 * A task in a v0.3 form. A completed task's answer is its artifact; its status message repeats the
 * same summary. v0.3 tooling (a2a-ai-provider, for one) joins the status message and the artifacts
 * into one text, so v0.3 callers get the artifact alone — the v1.0 view and the ledger keep both.
 */
export function taskIn(form: V03Form, t: Task): Record<string, unknown> {
  const { message: _repeat, ...status } = t.status;
  const answeredByArtifact = t.status.state === 'TASK_STATE_COMPLETED' && (t.artifacts?.length ?? 0) > 0;
  return {
    ...t,
    status: statusIn(form, answeredByArtifact ? status : t.status),
    ...(t.artifacts ? { artifacts: t.artifacts.map((a) => artifactIn(form, a)) } : {}),
    ...(t.history ? { history: t.history.map((m) => form.message(m)) } : {}),
  };
}

/** A status update in a v0.3 form; `final` marks the status the stream closes on. */
export function statusUpdateIn(form: V03Form, u: TaskStatusUpdateEvent): Record<string, unknown> {
  return { ...u, status: statusIn(form, u.status), final: isTerminal(u.status.state) || isInterrupted(u.status.state) };
}

function taskToV03(t: Task): Record<string, unknown> {
  return { kind: 'task', ...taskIn(JSONRPC, t) };
}

/** One v1.0 stream event as v0.3 sends it; `final` marks the status the stream closes on. */
export function streamEventToV03(e: StreamResponse): Record<string, unknown> {
  if ('task' in e) return taskToV03(e.task);
  if ('message' in e) return messageToV03(e.message);
  if ('statusUpdate' in e) return { kind: 'status-update', ...statusUpdateIn(JSONRPC, e.statusUpdate) };
  const a = e.artifactUpdate;
  return { kind: 'artifact-update', ...a, artifact: artifactIn(JSONRPC, a.artifact) };
}

/**
 * A stream as v0.3 clients expect it to end: on a status update marked `final`. A v1.0 stream that
 * closes on its first event — the task, already terminal or interrupted when the stream began (a
 * quick answer) — gets that status once more as a closing update, so every v0.3 stream of a task
 * ends the same way however fast the task was.
 */
export async function* withClosingStatus(events: AsyncIterable<StreamResponse>): AsyncGenerator<StreamResponse> {
  let last: StreamResponse | undefined;
  for await (const e of events) {
    last = e;
    yield e;
  }
  if (last && 'task' in last && (isTerminal(last.task.status.state) || isInterrupted(last.task.status.state)))
    yield { statusUpdate: { taskId: last.task.id, contextId: last.task.contextId, status: last.task.status } };
}

/** v0.3 params → the v1.0 params of `V03_METHODS[method]` (send methods convert the message). */
export function paramsFromV03(method: string, params: unknown): unknown {
  if (method !== 'message/send' && method !== 'message/stream') return params;
  const r = SendParamsV03Schema.safeParse(params ?? {});
  if (!r.success) throw invalidV03(r.error);
  const { message, configuration, ...rest } = r.data;
  const cfg = configuration ? (({ pushNotificationConfig: _p, ...c }) => c)(configuration) : undefined;
  return { ...rest, message: messageFromV03(message), ...(cfg ? { configuration: cfg } : {}) };
}

/** A v1.0 method result → its v0.3 form. */
export function resultToV03(method: string, result: unknown): unknown {
  const r = result as Record<string, unknown>;
  if (method === 'message/send') return 'task' in r ? taskToV03(r.task as Task) : messageToV03(r.message as Message);
  if (method === 'tasks/get' || method === 'tasks/cancel') return taskToV03(r as unknown as Task);
  return result;
}
