/**
 * Anthropic Messages on the wire (`POST /v1/messages`): reading a request into conversation
 * entries, and answering with a message, streamed as SSE events (what Claude Code asks for) or as
 * one JSON body.
 */
import type { ServerResponse } from 'node:http';
import type { Entry, Reply } from './script.js';
import { beat, chunksOf, type StreamPace } from './pace.js';

type Block = { type?: string; text?: unknown; content?: unknown };

function blocksOf(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

function textOf(content: unknown): string {
  return blocksOf(content)
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');
}

const REMINDER_RE = /<system-reminder>[\s\S]*?<\/system-reminder>/g;
const INTERRUPTED_RE = /^\[Request interrupted by user[^\]]*\]$/;

/**
 * The real prompt of a user message: its last text block that is not a harness-injected reminder or
 * an interruption marker. Claude Code merges consecutive user messages (after an interrupt or an API
 * error) into one message of several blocks; the last one is what was asked now.
 */
export function realUserText(content: unknown): string {
  const texts = blocksOf(content)
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => (b.text as string).replace(REMINDER_RE, '').trim())
    .filter((t) => t && !INTERRUPTED_RE.test(t));
  return texts.at(-1) ?? '';
}

export function anthropicEntries(body: { messages?: unknown }): Entry[] {
  const out: Entry[] = [];
  for (const m of Array.isArray(body.messages) ? (body.messages as { role?: string; content?: unknown }[]) : []) {
    if (m.role === 'assistant') {
      const blocks = blocksOf(m.content);
      out.push({ kind: 'assistant', toolCalls: blocks.filter((b) => b.type === 'tool_use').length, text: textOf(m.content) });
    } else if (m.role === 'user') {
      const results = blocksOf(m.content).filter((b) => b.type === 'tool_result');
      for (const r of results) out.push({ kind: 'toolResult', text: typeof r.content === 'string' ? r.content : textOf(r.content) });
      // A prompt sent after a cancelled tool call arrives in the same message as the refused result.
      const text = realUserText(m.content);
      if (text) out.push({ kind: 'prompt', text });
    }
    // role "system" (Claude Code's mid-conversation system messages) says nothing about the script.
  }
  return out;
}

export function anthropicTools(body: { tools?: unknown }): string[] {
  return Array.isArray(body.tools) ? (body.tools as { name?: unknown }[]).map((t) => String(t.name ?? '')).filter(Boolean) : [];
}

export async function writeAnthropic(
  res: ServerResponse,
  reply: Exclude<Reply, { kind: 'fail' }>,
  opts: { id: string; model: string; stream: boolean; pace: StreamPace },
): Promise<void> {
  const { id, model } = opts;
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const toolId = `toolu_${id}`;
  const content =
    reply.kind === 'tool' ? [{ type: 'tool_use', id: toolId, name: reply.name, input: reply.input }] : [{ type: 'text', text: reply.text }];
  const stopReason = reply.kind === 'tool' ? 'tool_use' : 'end_turn';
  if (!opts.stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${id}` });
    res.end(
      JSON.stringify({
        id: `msg_${id}`,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${id}` });
  const event = (type: string, data: object) => {
    if (!res.destroyed && !res.writableEnded) res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  };
  event('message_start', {
    message: {
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  if (reply.kind === 'tool') {
    if (reply.slow) {
      for (let i = 0; i < opts.pace.chunks; i++) {
        event('ping', {});
        if (!(await beat(res, opts.pace))) return;
      }
    }
    event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: toolId, name: reply.name, input: {} } });
    event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) } });
  } else {
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    for (const c of reply.slow ? chunksOf(reply.text, opts.pace) : [reply.text]) {
      if (c) event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: c } });
      else event('ping', {});
      if (reply.slow && !(await beat(res, opts.pace))) return;
    }
  }
  event('content_block_stop', { index: 0 });
  event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
  event('message_stop', {});
  res.end();
}

export function writeAnthropicError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ type: 'error', error: { type: status === 529 ? 'overloaded_error' : 'api_error', message } }));
}
