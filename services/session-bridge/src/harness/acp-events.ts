/**
 * What an ACP agent writes on stdout, the messages the adapter reads: JSON-RPC 2.0, one per line —
 * answers to our requests, its own requests (`session/request_permission`, `fs/*`, `terminal/*`)
 * and notifications (`session/update`). The wire types are the ACP SDK's; the schemas are tolerant
 * (agents differ and change): every field we read is optional and reads as undefined in another
 * shape, so a surprise never drops a message whose loss would hang a turn.
 */
import type { PermissionOptionKind, StopReason } from '@agentclientprotocol/sdk';
import { z } from 'zod';
import { field } from './stream.js';

const Id = z.union([z.string(), z.number()]);

export const AcpToolCallSchema = z
  .object({
    toolCallId: field(z.string()),
    title: field(z.string()),
    kind: field(z.string()),
    rawInput: z.unknown().optional(),
    content: z.unknown().optional(),
  })
  .loose();
export type AcpToolCall = z.infer<typeof AcpToolCallSchema>;

export const AcpPermissionOptionSchema = z
  .object({ optionId: z.string(), kind: field(z.custom<PermissionOptionKind>((v) => typeof v === 'string')) })
  .loose();
export type AcpPermissionOption = z.infer<typeof AcpPermissionOptionSchema>;

const UpdateSchema = z
  .object({
    sessionUpdate: field(z.string()),
    content: field(z.object({ type: field(z.string()), text: field(z.string()) }).loose()),
  })
  .loose();

/** An answer to one of our requests (`result` or `error`). */
const ResponseSchema = z
  .object({
    id: Id,
    result: z.unknown().optional(),
    error: field(z.object({ code: field(z.number()), message: field(z.string()), data: z.unknown().optional() }).loose()),
  })
  .loose()
  .transform((m) => ({ ...m, kind: 'response' as const }));

/** A request of the agent's: it waits for our answer with the same id. */
const RequestSchema = z
  .object({ id: Id, method: z.string(), params: z.unknown().optional() })
  .loose()
  .transform((m) => ({ ...m, kind: 'request' as const }));

const NotificationSchema = z
  .object({ method: z.string(), params: z.unknown().optional() })
  .loose()
  .transform((m) => ({ ...m, kind: 'notification' as const }));

// Order matters: a request has an id and a method, a response an id and no method.
export const AcpMessageSchema = z.union([RequestSchema, ResponseSchema.refine((m) => !('method' in m)), NotificationSchema]);
export type AcpMessage = z.infer<typeof AcpMessageSchema>;

export const PermissionParamsSchema = z
  .object({ toolCall: field(AcpToolCallSchema), options: field(z.array(AcpPermissionOptionSchema.catch({ optionId: '' }))) })
  .loose();

export const SessionUpdateParamsSchema = z.object({ sessionId: field(z.string()), update: field(UpdateSchema) }).loose();

export const InitializeResultSchema = z
  .object({
    protocolVersion: field(z.number()),
    agentCapabilities: field(
      z
        .object({
          loadSession: field(z.boolean()),
          mcpCapabilities: field(z.object({ http: field(z.boolean()), sse: field(z.boolean()) }).loose()),
        })
        .loose(),
    ),
    agentInfo: field(z.object({ name: field(z.string()), version: field(z.string()) }).loose()),
  })
  .loose();
export type AcpInitializeResult = z.infer<typeof InitializeResultSchema>;

export const NewSessionResultSchema = z.object({ sessionId: z.string() }).loose();

export const PromptResultSchema = z.object({ stopReason: field(z.custom<StopReason>((v) => typeof v === 'string')) }).loose();
