/** Claude Code's `stream-json` output, the lines the adapter reads (checked against 2.1.197). */
import { z } from 'zod';
import { event, field } from './stream.js';

const TextBlock = z.object({ type: field(z.string()), text: field(z.string()) }).loose();

export const ClaudeEventSchema = z.discriminatedUnion('type', [
  /** An answer to one of our control requests (or an echo of our answer to one of its own). */
  event('control_response', {
    response: z
      .object({ request_id: field(z.string()), subtype: field(z.string()), error: field(z.string()) })
      .loose()
      .catch({}),
  }),
  /** The CLI asks us: `can_use_tool` (a permission prompt) or something we do not support. */
  event('control_request', {
    request_id: z.string().catch(''),
    request: z
      .object({ subtype: field(z.string()), tool_name: field(z.string()), input: z.unknown().optional() })
      .loose()
      .catch({ input: undefined }),
  }),
  /** A prompt it asked is withdrawn (an interrupt while it waited). */
  event('control_cancel_request', { request_id: z.string().catch('') }),
  /** Our own line echoed (`isReplay`, our uuid) — or a tool result. */
  event('user', { uuid: field(z.string()), isReplay: field(z.boolean()) }),
  event('assistant', {
    message: z
      .object({ content: field(z.array(TextBlock)) })
      .loose()
      .catch({}),
  }),
  /** The end of a turn; `is_error` is the truth, not `subtype`. */
  event('result', {
    subtype: field(z.string()),
    is_error: field(z.boolean()),
    result: field(z.string()),
    terminal_reason: field(z.string()),
    errors: field(z.array(z.unknown())),
  }),
  /**
   * `session_state_changed`, `init`, background commands (`task_started`, `task_updated`,
   * `task_notification`), `api_retry` (the model endpoint answered an error; the CLI waits
   * `retry_delay_ms` and tries again: `attempt` of `max_retries`, `error_status` the HTTP status) …
   */
  event('system', {
    subtype: field(z.string()),
    attempt: field(z.number()),
    max_retries: field(z.number()),
    error_status: field(z.number().nullable()),
    error: field(z.string()),
    state: field(z.string()),
    task_id: field(z.string()),
    status: field(z.string()),
    patch: field(z.object({ status: field(z.string()) }).loose()),
  }),
]);
export type ClaudeEvent = z.infer<typeof ClaudeEventSchema>;
export type ClaudeSystemEvent = Extract<ClaudeEvent, { type: 'system' }>;
export type ClaudeResultEvent = Extract<ClaudeEvent, { type: 'result' }>;
export type ClaudeControlRequest = Extract<ClaudeEvent, { type: 'control_request' }>;
export type ClaudeControlResponse = Extract<ClaudeEvent, { type: 'control_response' }>['response'];
