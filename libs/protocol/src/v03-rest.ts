/**
 * A2A v0.3 over HTTP+JSON, as `@a2a-js/sdk` 0.3.x's `RestTransport` speaks it: paths under `/v1/`
 * (`message:send`, `message:stream`, `tasks/{id}`, `tasks/{id}:cancel`, `tasks/{id}:subscribe`,
 * `card`), bodies in the JSON of the v0.3 proto (package `a2a.v1`): a message carries `content`
 * (not `parts`), a part is `{text}` | `{file: {fileWithUri | fileWithBytes, mimeType}}` |
 * `{data: {data}}` (no `kind`), states and roles are proto names (`TASK_STATE_CANCELLED` with two
 * Ls), status updates carry `final`; errors are `{code, message, data}` with the JSON-RPC code
 * beside the HTTP status. Turned into v1.0 on the way in and back on the way out, like v03.ts:
 * the ledger holds v1.0 only.
 */
import { z } from 'zod';
import type { Artifact, Message, Part, StreamResponse, Task, TaskState, TaskStatus } from './a2a.js';
import { isInterrupted, isTerminal } from './a2a.js';
import { ShroomsError } from './errors.js';
import { answeredByArtifact } from './v03.js';

const Meta = z.record(z.string(), z.unknown()).optional();

export const RestPartV03Schema = z.union([
  z.object({ text: z.string(), metadata: Meta }),
  z.object({
    file: z.union([
      z.object({ fileWithBytes: z.string(), mimeType: z.string().optional(), name: z.string().optional() }),
      z.object({ fileWithUri: z.string(), mimeType: z.string().optional(), name: z.string().optional() }),
    ]),
    metadata: Meta,
  }),
  z.object({ data: z.object({ data: z.record(z.string(), z.unknown()) }), metadata: Meta }),
]);
export type RestPartV03 = z.infer<typeof RestPartV03Schema>;

const RestMessageV03Schema = z
  .object({
    messageId: z.string(),
    role: z.enum(['ROLE_USER', 'ROLE_AGENT']),
    content: z.array(RestPartV03Schema),
    contextId: z.string().optional(),
    taskId: z.string().optional(),
    metadata: Meta,
    extensions: z.array(z.string()).optional(),
  })
  .loose();

/** `SendMessageRequest`: the proto names its message `request`, its JSON `message`; both are read. */
const RestSendV03Schema = z
  .object({
    message: RestMessageV03Schema.optional(),
    request: RestMessageV03Schema.optional(),
    configuration: z
      .object({
        acceptedOutputModes: z.array(z.string()).optional(),
        historyLength: z.number().int().min(0).optional(),
        blocking: z.boolean().optional(),
      })
      .loose()
      .optional(),
    metadata: Meta,
  })
  .loose();

const STATE_NAME: Partial<Record<TaskState, string>> = { TASK_STATE_CANCELED: 'TASK_STATE_CANCELLED' };

function partFromRest(p: RestPartV03): Part {
  const md = p.metadata ? { metadata: p.metadata } : {};
  if ('text' in p) return { text: p.text, ...md };
  if ('data' in p) return { data: p.data.data, ...md };
  const f = p.file;
  const named = { ...(f.name ? { filename: f.name } : {}), ...(f.mimeType ? { mediaType: f.mimeType } : {}), ...md };
  return 'fileWithBytes' in f ? { raw: f.fileWithBytes, ...named } : { url: f.fileWithUri, ...named };
}

function partToRest(p: Part): RestPartV03 {
  const md = p.metadata ? { metadata: p.metadata } : {};
  const mime = p.mediaType ? { mimeType: p.mediaType } : {};
  if (p.raw !== undefined) return { file: { fileWithBytes: p.raw, ...mime }, ...md };
  if (p.url !== undefined) return { file: { fileWithUri: p.url, ...mime }, ...md };
  if (p.data !== undefined) {
    const data =
      p.data !== null && typeof p.data === 'object' && !Array.isArray(p.data) ? (p.data as Record<string, unknown>) : { value: p.data };
    return { data: { data }, ...md };
  }
  return { text: p.text ?? '', ...md };
}

function messageFromRest(m: z.infer<typeof RestMessageV03Schema>): Message {
  // The proto's JSON leaves out empty strings; the v0.3 client sends "" for an unset context or task.
  const { role, content, contextId, taskId, ...rest } = m;
  return { ...rest, ...(contextId ? { contextId } : {}), ...(taskId ? { taskId } : {}), role, parts: content.map(partFromRest) } as Message;
}

function messageToRest(m: Message): Record<string, unknown> {
  const { parts, ...rest } = m;
  return { ...rest, content: parts.map(partToRest) };
}

function statusToRest(s: TaskStatus): Record<string, unknown> {
  return { ...s, state: STATE_NAME[s.state] ?? s.state, ...(s.message ? { message: messageToRest(s.message) } : {}) };
}

function artifactToRest(a: Artifact): Record<string, unknown> {
  return { ...a, parts: a.parts.map(partToRest) };
}

/** A task as v0.3 REST sends it (a completed task's answer in its artifact alone, as in v03.ts). */
export function taskToV03Rest(t: Task): Record<string, unknown> {
  const { message: _repeat, ...status } = t.status;
  return {
    ...t,
    status: statusToRest(answeredByArtifact(t) ? status : t.status),
    ...(t.artifacts ? { artifacts: t.artifacts.map(artifactToRest) } : {}),
    ...(t.history ? { history: t.history.map(messageToRest) } : {}),
  };
}

/** One v1.0 stream event as a v0.3 `StreamResponse`; `final` marks the status the stream closes on. */
export function streamEventToV03Rest(e: StreamResponse): Record<string, unknown> {
  if ('task' in e) return { task: taskToV03Rest(e.task) };
  if ('message' in e) return { message: messageToRest(e.message) };
  if ('statusUpdate' in e) {
    const u = e.statusUpdate;
    const final = isTerminal(u.status.state) || isInterrupted(u.status.state);
    return { statusUpdate: { ...u, status: statusToRest(u.status), final } };
  }
  const a = e.artifactUpdate;
  return { artifactUpdate: { ...a, artifact: artifactToRest(a.artifact) } };
}

/** A v0.3 REST `SendMessageRequest` body → v1.0 SendMessage params. */
export function sendParamsFromV03Rest(body: unknown): unknown {
  const r = RestSendV03Schema.safeParse(body ?? {});
  if (!r.success) {
    const first = r.error.issues[0]!;
    throw new ShroomsError('INVALID_PARAMS', `invalid params: ${first.path.join('.') || '(body)'}: ${first.message}`);
  }
  const { message, request, configuration, ...rest } = r.data;
  const m = message ?? request;
  if (!m) throw new ShroomsError('INVALID_PARAMS', 'invalid params: message: Required');
  // The proto's JSON leaves `blocking: false` out: with a configuration, only `blocking: true` blocks
  // (as the v0.3 reference server reads it); with none, the send blocks.
  const cfg = configuration
    ? {
        ...(configuration.acceptedOutputModes?.length ? { acceptedOutputModes: configuration.acceptedOutputModes } : {}),
        ...(configuration.historyLength ? { historyLength: configuration.historyLength } : {}),
        ...(configuration.blocking === true ? {} : { returnImmediately: true }),
      }
    : undefined;
  return { ...rest, message: messageFromRest(m), ...(cfg && Object.keys(cfg).length ? { configuration: cfg } : {}) };
}

/** A v1.0 method result → its v0.3 REST body (`SendMessageResponse` for sends, the Task for reads). */
export function resultToV03Rest(method: string, result: unknown): unknown {
  const r = result as Record<string, unknown>;
  if (method === 'SendMessage')
    return 'task' in r ? { task: taskToV03Rest(r.task as Task) } : { message: messageToRest(r.message as Message) };
  if (method === 'GetTask' || method === 'CancelTask') return taskToV03Rest(r as unknown as Task);
  return result;
}
