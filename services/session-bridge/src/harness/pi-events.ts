/** pi's `--mode rpc` output, the lines the adapter reads (checked against 0.73.1). */
import { z } from 'zod';
import { event, field } from './stream.js';

export const PiMessageSchema = z
  .object({
    role: field(z.string()),
    content: z.unknown().optional(),
    stopReason: field(z.string()),
    errorMessage: field(z.string()),
  })
  .loose();
export type PiMessage = z.infer<typeof PiMessageSchema>;

export const PiEventSchema = z.discriminatedUnion('type', [
  /** The answer to one of our commands, by id. */
  event('response', { id: field(z.string()), success: field(z.boolean()), error: z.unknown().optional(), data: z.unknown().optional() }),
  event('message_end', { message: field(PiMessageSchema) }),
  /** The run ended; its messages are the run's (a run can still go on: see the adapter). */
  event('agent_end', { messages: field(z.array(PiMessageSchema.catch({ content: undefined }))) }),
  /** An extension's dialog (select/confirm/input/editor) blocks pi until answered. */
  event('extension_ui_request', { id: z.unknown().optional(), method: field(z.string()), title: z.unknown().optional() }),
  event('extension_error', { extensionPath: z.unknown().optional(), event: z.unknown().optional(), error: z.unknown().optional() }),
]);
export type PiEvent = z.infer<typeof PiEventSchema>;
/** What a command's answer carries. */
export type PiResponse = Extract<PiEvent, { type: 'response' }>;
