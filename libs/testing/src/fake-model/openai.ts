/**
 * OpenAI Chat Completions on the wire (`POST /v1/chat/completions`): reading a request into
 * conversation entries, and answering streamed (`data:` chunks, then `[DONE]`, as pi asks) or as one
 * JSON body.
 */
import type { ServerResponse } from 'node:http';
import type { Entry, Reply } from './script.js';
import { realUserText } from './anthropic.js';
import { beat, chunksOf, type StreamPace } from './pace.js';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as { type?: string; text?: unknown }[])
    .filter((p) => (p.type === 'text' || p.type === 'input_text') && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('\n');
}

export function openaiEntries(body: { messages?: unknown }): Entry[] {
  const out: Entry[] = [];
  for (const m of Array.isArray(body.messages) ? (body.messages as { role?: string; content?: unknown; tool_calls?: unknown }[]) : []) {
    if (m.role === 'assistant')
      out.push({ kind: 'assistant', toolCalls: Array.isArray(m.tool_calls) ? m.tool_calls.length : 0, text: textOf(m.content) });
    else if (m.role === 'tool') out.push({ kind: 'toolResult', text: textOf(m.content) });
    else if (m.role === 'user') {
      const text = realUserText(
        typeof m.content === 'string'
          ? m.content
          : Array.isArray(m.content)
            ? m.content.map((p: { type?: string }) => (p.type === 'input_text' ? { ...p, type: 'text' } : p))
            : [],
      );
      if (text) out.push({ kind: 'prompt', text });
    }
  }
  return out;
}

export function openaiTools(body: { tools?: unknown }): string[] {
  return Array.isArray(body.tools)
    ? (body.tools as { function?: { name?: unknown }; name?: unknown }[])
        .map((t) => String(t.function?.name ?? t.name ?? ''))
        .filter(Boolean)
    : [];
}

export async function writeOpenai(
  res: ServerResponse,
  reply: Exclude<Reply, { kind: 'fail' }>,
  opts: { id: string; model: string; stream: boolean; pace: StreamPace },
): Promise<void> {
  const id = `chatcmpl-${opts.id}`;
  const { model } = opts;
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const toolCalls =
    reply.kind === 'tool'
      ? [{ index: 0, id: `call_${opts.id}`, type: 'function', function: { name: reply.name, arguments: JSON.stringify(reply.input) } }]
      : undefined;
  const finish = reply.kind === 'tool' ? 'tool_calls' : 'stop';
  if (!opts.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    const message = {
      role: 'assistant',
      content: reply.kind === 'tool' ? null : reply.text,
      ...(toolCalls ? { tool_calls: toolCalls } : {}),
    };
    res.end(
      JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: object, finishReason: string | null = null, extra: object = {}) => {
    if (!res.destroyed && !res.writableEnded)
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`,
      );
  };
  chunk({ role: 'assistant', content: '' });
  if (reply.kind === 'tool') {
    if (reply.slow) for (let i = 0; i < opts.pace.chunks; i++) if (!(await beat(res, opts.pace))) return;
    chunk({ tool_calls: toolCalls });
  } else {
    for (const c of reply.slow ? chunksOf(reply.text, opts.pace) : [reply.text]) {
      if (c) chunk({ content: c });
      if (reply.slow && !(await beat(res, opts.pace))) return;
    }
  }
  chunk({}, finish, { usage });
  if (!res.destroyed) res.end('data: [DONE]\n\n');
}

export function writeOpenaiError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'server_error', code: null } }));
}
