/**
 * A2A v0.3 over HTTP+JSON, as `@a2a-js/sdk` 0.3.x's `RestTransport` speaks it: paths under `/v1/`
 * (`message:send`, `message:stream`, `tasks/{id}`, `tasks/{id}:cancel`, `tasks/{id}:subscribe`,
 * `card`), bodies in the JSON of the v0.3 proto (package `a2a.v1`): a message carries `content`
 * (not `parts`), a part is `{text}` | `{file: {fileWithUri | fileWithBytes, mimeType}}` |
 * `{data: {data}}` (no `kind`), states and roles are proto names (`TASK_STATE_CANCELLED` with two
 * Ls), status updates carry `final`; errors are `{code, message, data}` with the JSON-RPC code
 * beside the HTTP status. Turned into v1.0 on the way in and back on the way out, like jsonrpc.ts:
 * the ledger holds v1.0 only. A part here is jsonrpc.ts's part under other names, and a task, its
 * status and its stream events have jsonrpc.ts's shape (V03Form): only the names are this file's.
 */
import { z } from 'zod';
import { ShroomsError, type Message, type Part, type StreamResponse, type Task, type TaskState } from '@shrooms/protocol';
import {
  V03ConfigurationSchema,
  V03Meta as Meta,
  artifactIn,
  invalidV03,
  partFromV03,
  partToV03,
  statusUpdateIn,
  taskIn,
  type V03Form,
} from './jsonrpc.js';

const RestPartV03Schema = z.union([
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
type RestPartV03 = z.infer<typeof RestPartV03Schema>;

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
    configuration: V03ConfigurationSchema.optional(),
    metadata: Meta,
  })
  .loose();

const STATE_NAME: Partial<Record<TaskState, string>> = { TASK_STATE_CANCELED: 'TASK_STATE_CANCELLED' };

/** A REST part is a JSON-RPC v0.3 part under other names: renamed here, converted once in jsonrpc.ts. */
function partFromRest(p: RestPartV03): Part {
  const md = p.metadata ? { metadata: p.metadata } : {};
  if ('text' in p) return partFromV03({ kind: 'text', text: p.text, ...md });
  if ('data' in p) return partFromV03({ kind: 'data', data: p.data.data, ...md });
  const { name, mimeType } = p.file;
  const named = { ...(name !== undefined ? { name } : {}), ...(mimeType !== undefined ? { mimeType } : {}) };
  const file = 'fileWithBytes' in p.file ? { bytes: p.file.fileWithBytes, ...named } : { uri: p.file.fileWithUri, ...named };
  return partFromV03({ kind: 'file', file, ...md });
}

/** A JSON-RPC v0.3 part under REST's names: the file's name and media type go as they came in. */
function partToRest(p: Part): RestPartV03 {
  const v = partToV03(p);
  const md = v.metadata ? { metadata: v.metadata } : {};
  if (v.kind === 'text') return { text: v.text, ...md };
  if (v.kind === 'data') return { data: { data: v.data }, ...md };
  const { name, mimeType } = v.file;
  const named = { ...(mimeType ? { mimeType } : {}), ...(name ? { name } : {}) };
  return { file: 'bytes' in v.file ? { fileWithBytes: v.file.bytes, ...named } : { fileWithUri: v.file.uri, ...named }, ...md };
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

const REST: V03Form = { message: messageToRest, part: partToRest, state: (s) => STATE_NAME[s] ?? s };

/** One v1.0 stream event as a v0.3 `StreamResponse`; `final` marks the status the stream closes on. */
export function streamEventToV03Rest(e: StreamResponse): Record<string, unknown> {
  if ('task' in e) return { task: taskIn(REST, e.task) };
  if ('message' in e) return { message: messageToRest(e.message) };
  if ('statusUpdate' in e) return { statusUpdate: statusUpdateIn(REST, e.statusUpdate) };
  const a = e.artifactUpdate;
  return { artifactUpdate: { ...a, artifact: artifactIn(REST, a.artifact) } };
}

/** A v0.3 REST `SendMessageRequest` body → v1.0 SendMessage params. */
export function sendParamsFromV03Rest(body: unknown): unknown {
  const r = RestSendV03Schema.safeParse(body ?? {});
  if (!r.success) throw invalidV03(r.error, '(body)');
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
    return 'task' in r ? { task: taskIn(REST, r.task as Task) } : { message: messageToRest(r.message as Message) };
  if (method === 'GetTask' || method === 'CancelTask') return taskIn(REST, r as unknown as Task);
  return result;
}
