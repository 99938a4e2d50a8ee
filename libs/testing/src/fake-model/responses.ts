/**
 * The OpenAI Responses API on the wire (`POST /v1/responses`, as Codex calls it): reading a
 * request's `input` items into conversation entries, and answering streamed (SSE events ending in
 * `response.completed`, which Codex waits for) or as one JSON body.
 */
import type { ServerResponse } from 'node:http';
import type { Entry, Reply } from './script.js';
import { realUserText } from './anthropic.js';
import { beat, chunksOf, type StreamPace } from './pace.js';

type Item = { type?: string; role?: string; content?: unknown; output?: unknown };

function texts(content: unknown): { type: 'text'; text: string }[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return (content as { type?: string; text?: unknown }[])
    .filter((p) => (p.type === 'input_text' || p.type === 'output_text' || p.type === 'text') && typeof p.text === 'string')
    .map((p) => ({ type: 'text' as const, text: p.text as string }));
}

const CODEX_OUTPUT_RE = /^Wall time: [^\n]*\nOutput:\n([\s\S]*)$/;

/**
 * A function call's output as text. Codex sends an MCP result as `Wall time: …\nOutput:\n` and the
 * result's content blocks as JSON; their text is what the tool said.
 */
function outputText(output: unknown): string {
  const raw =
    typeof output === 'string'
      ? output
      : texts((output as Item)?.content ?? output)
          .map((t) => t.text)
          .join('\n');
  const m = CODEX_OUTPUT_RE.exec(raw);
  if (!m) return raw;
  try {
    const blocks = JSON.parse(m[1]!) as unknown;
    if (Array.isArray(blocks))
      return texts(blocks)
        .map((t) => t.text)
        .join('\n');
  } catch {
    // Not JSON: the text as it is.
  }
  return m[1]!;
}

export function responsesEntries(body: { input?: unknown }): Entry[] {
  const out: Entry[] = [];
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  for (const it of Array.isArray(input) ? (input as Item[]) : []) {
    const type = it.type ?? 'message';
    if (type === 'function_call') out.push({ kind: 'assistant', toolCalls: 1, text: '' });
    else if (type === 'function_call_output') out.push({ kind: 'toolResult', text: outputText(it.output) });
    else if (type === 'message' && it.role === 'assistant')
      out.push({
        kind: 'assistant',
        toolCalls: 0,
        text: texts(it.content)
          .map((t) => t.text)
          .join('\n'),
      });
    else if (type === 'message' && it.role === 'user') {
      const text = realUserText(texts(it.content));
      if (text) out.push({ kind: 'prompt', text });
    }
  }
  return out;
}

type Tool = { type?: string; name?: unknown; tools?: Tool[] };

/** Tool names; a function inside a `namespace` tool (Codex groups each MCP server's so) is `<namespace>__<name>`. */
export function responsesTools(body: { tools?: unknown }): string[] {
  const out: string[] = [];
  for (const t of Array.isArray(body.tools) ? (body.tools as Tool[]) : []) {
    if (t.type === 'namespace' && Array.isArray(t.tools)) for (const f of t.tools) out.push(`${String(t.name)}__${String(f.name)}`);
    else if (typeof t.name === 'string') out.push(t.name);
  }
  return out;
}

/** The call of a tool by the name `responsesTools` gave it: a namespaced one names its namespace. */
function callOf(body: { tools?: unknown }, name: string): { name: string; namespace?: string } {
  for (const t of Array.isArray(body.tools) ? (body.tools as Tool[]) : []) {
    if (t.type !== 'namespace' || !Array.isArray(t.tools)) continue;
    const f = t.tools.find((x) => `${String(t.name)}__${String(x.name)}` === name);
    if (f) return { namespace: String(t.name), name: String(f.name) };
  }
  return { name };
}

export async function writeResponses(
  res: ServerResponse,
  reply: Exclude<Reply, { kind: 'fail' }>,
  opts: { id: string; model: string; stream: boolean; pace: StreamPace; body?: Record<string, unknown> },
): Promise<void> {
  const id = `resp_${opts.id}`;
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  const item =
    reply.kind === 'tool'
      ? {
          type: 'function_call',
          id: `fc_${opts.id}`,
          call_id: `call_${opts.id}`,
          ...callOf(opts.body ?? {}, reply.name),
          arguments: JSON.stringify(reply.input),
          status: 'completed',
        }
      : {
          type: 'message',
          id: `msg_${opts.id}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: reply.text, annotations: [] }],
        };
  const response = (status: string, output: object[]) => ({
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    model: opts.model,
    output,
    usage,
  });
  if (!opts.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response('completed', [item])));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let seq = 0;
  const event = (type: string, data: object) => {
    if (!res.destroyed && !res.writableEnded)
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  };
  event('response.created', { response: response('in_progress', []) });
  if (reply.kind === 'tool') {
    if (reply.slow) for (let i = 0; i < opts.pace.chunks; i++) if (!(await beat(res, opts.pace))) return;
  } else {
    event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    for (const c of reply.slow ? chunksOf(reply.text, opts.pace) : [reply.text]) {
      if (c) event('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: c });
      if (reply.slow && !(await beat(res, opts.pace))) return;
    }
  }
  event('response.output_item.done', { output_index: 0, item });
  event('response.completed', { response: response('completed', [item]) });
  if (!res.destroyed) res.end();
}

export function writeResponsesError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'server_error', code: null } }));
}
