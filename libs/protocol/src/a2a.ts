/**
 * A2A v1.0 wire schemas (spec JSON: camelCase, enum names, no `$case` objects). The zod schema is the
 * type. Payloads we do not own stay loose (metadata); what we act on is strict.
 */
import { z } from 'zod';

export const TASK_STATES = [
  'TASK_STATE_UNSPECIFIED',
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;
export const TaskStateSchema = z.enum(TASK_STATES);
export type TaskState = z.infer<typeof TaskStateSchema>;

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);
export const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

export const isTerminal = (s: TaskState): boolean => TERMINAL_STATES.has(s);
export const isInterrupted = (s: TaskState): boolean => INTERRUPTED_STATES.has(s);

export const MetadataSchema = z.record(z.string(), z.unknown());
export type Metadata = z.infer<typeof MetadataSchema>;

/**
 * What SDKs send for a field they never set reads as absent, on both bindings: ts-proto writes an
 * enum it was given no value for as `"UNRECOGNIZED"` (or its `*_UNSPECIFIED` name, or `0`), and a
 * string as `""`. A wrong value of the right kind is still refused.
 */
const UNSET_ENUM = new Set<unknown>(['UNRECOGNIZED', 'TASK_STATE_UNSPECIFIED', 'ROLE_UNSPECIFIED', 0]);
export const unsetEnum = <S extends z.ZodType>(schema: S) => z.preprocess((v) => (UNSET_ENUM.has(v) ? undefined : v), schema);
export const unsetString = <S extends z.ZodType>(schema: S) => z.preprocess((v) => (v === '' ? undefined : v), schema);

export const RoleSchema = z.enum(['ROLE_UNSPECIFIED', 'ROLE_USER', 'ROLE_AGENT']);
export type Role = z.infer<typeof RoleSchema>;

/** A part is exactly one of text | raw | url | data; we accept only text for now (see `textOf`). */
export const PartSchema = z
  .object({
    text: z.string().optional(),
    raw: z.string().optional(),
    url: z.string().optional(),
    data: z.unknown().optional(),
    metadata: MetadataSchema.optional(),
    filename: z.string().optional(),
    mediaType: z.string().optional(),
  })
  .strict();
export type Part = z.infer<typeof PartSchema>;

export const MessageSchema = z.object({
  messageId: z.string().min(1),
  contextId: unsetString(z.string().optional()),
  taskId: unsetString(z.string().optional()),
  /** A message that reaches us is the user's, whatever role an SDK left unset. */
  role: unsetEnum(RoleSchema.default('ROLE_USER')),
  parts: z.array(PartSchema).min(1),
  metadata: MetadataSchema.optional(),
  extensions: z.array(z.string()).optional(),
  referenceTaskIds: z.array(z.string()).optional(),
});
export type Message = z.infer<typeof MessageSchema>;

export const TaskStatusSchema = z.object({
  state: TaskStateSchema,
  message: MessageSchema.optional(),
  timestamp: z.string().optional(),
});
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

export const ArtifactSchema = z.object({
  artifactId: z.string(),
  name: z.string().optional(),
  description: z.string().optional(),
  parts: z.array(PartSchema),
  metadata: MetadataSchema.optional(),
  extensions: z.array(z.string()).optional(),
});
export type Artifact = z.infer<typeof ArtifactSchema>;

export const TaskSchema = z.object({
  id: z.string(),
  contextId: z.string(),
  status: TaskStatusSchema,
  artifacts: z.array(ArtifactSchema).optional(),
  history: z.array(MessageSchema).optional(),
  metadata: MetadataSchema.optional(),
});
export type Task = z.infer<typeof TaskSchema>;

export const TaskStatusUpdateEventSchema = z.object({
  taskId: z.string(),
  contextId: z.string(),
  status: TaskStatusSchema,
  metadata: MetadataSchema.optional(),
});
export type TaskStatusUpdateEvent = z.infer<typeof TaskStatusUpdateEventSchema>;

export const TaskArtifactUpdateEventSchema = z.object({
  taskId: z.string(),
  contextId: z.string(),
  artifact: ArtifactSchema,
  append: z.boolean().optional(),
  lastChunk: z.boolean().optional(),
  metadata: MetadataSchema.optional(),
});
export type TaskArtifactUpdateEvent = z.infer<typeof TaskArtifactUpdateEventSchema>;

export type StreamResponse =
  { task: Task } | { message: Message } | { statusUpdate: TaskStatusUpdateEvent } | { artifactUpdate: TaskArtifactUpdateEvent };

// ---- requests -------------------------------------------------------------------------------------

const tenant = z.string().optional();

export const SendMessageConfigurationSchema = z
  .object({
    acceptedOutputModes: z.array(z.string()).optional(),
    taskPushNotificationConfig: z.unknown().optional(),
    historyLength: z.number().int().min(0).optional(),
    returnImmediately: z.boolean().optional(),
    /** Pre-1.0 clients still send this (inverse of returnImmediately). */
    blocking: z.boolean().optional(),
  })
  .loose();

export const SendMessageParamsSchema = z
  .object({
    tenant,
    message: MessageSchema,
    configuration: SendMessageConfigurationSchema.optional(),
    metadata: MetadataSchema.optional(),
  })
  .loose();
export type SendMessageParams = z.infer<typeof SendMessageParamsSchema>;

export const GetTaskParamsSchema = z.object({ tenant, id: z.string().min(1), historyLength: z.number().int().min(0).optional() }).loose();
export type GetTaskParams = z.infer<typeof GetTaskParamsSchema>;

export const ListTasksParamsSchema = z
  .object({
    tenant,
    contextId: unsetString(z.string().optional()),
    status: unsetEnum(TaskStateSchema.optional()),
    pageSize: z.number().int().min(1).max(100).optional(),
    pageToken: unsetString(z.string().optional()),
    historyLength: z.number().int().min(0).optional(),
    statusTimestampAfter: z.string().datetime({ offset: true }).optional(),
    includeArtifacts: z.boolean().optional(),
  })
  .loose();
export type ListTasksParams = z.infer<typeof ListTasksParamsSchema>;

export const CancelTaskParamsSchema = z.object({ tenant, id: z.string().min(1), metadata: MetadataSchema.optional() }).loose();
export type CancelTaskParams = z.infer<typeof CancelTaskParamsSchema>;

export const SubscribeToTaskParamsSchema = z.object({ tenant, id: z.string().min(1) }).loose();

/** The task extension's AckTask. */
export const AckTaskParamsSchema = z.object({ tenant, id: z.string().min(1), metadata: MetadataSchema.optional() }).loose();

export interface ListTasksResult {
  tasks: Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

export const A2A_METHODS = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
  'AckTask',
] as const;
export type A2AMethod = (typeof A2A_METHODS)[number];

/** Joined text of a message's text parts. */
export function textOf(m: Pick<Message, 'parts'> | undefined): string {
  if (!m) return '';
  return m.parts
    .map((p) => p.text)
    .filter((x): x is string => typeof x === 'string')
    .join('\n');
}

export function textMessage(role: Role, text: string, extra: Partial<Message> = {}): Message {
  return { messageId: extra.messageId ?? cryptoId(), role, parts: [{ text }], ...extra };
}

function cryptoId(): string {
  return globalThis.crypto.randomUUID();
}

/** Each v1.0 state's v0.3 name (also the short form the CLI prints). */
export const V03_STATES: Readonly<Record<TaskState, string>> = {
  TASK_STATE_UNSPECIFIED: 'unknown',
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_AUTH_REQUIRED: 'auth-required',
};
