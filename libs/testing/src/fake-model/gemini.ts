/**
 * The Gemini API on the wire (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` and
 * `:generateContent`, as Gemini CLI calls them through `@google/genai`): reading a request into
 * conversation entries, and answering streamed (`data:` chunks of `GenerateContentResponse`) or as
 * one JSON body.
 */
import type { ServerResponse } from 'node:http';
import type { Entry, Reply } from './script.js';
import { realUserText } from './anthropic.js';
import { beat, chunksOf, type StreamPace } from './pace.js';

type Part = { text?: unknown; thought?: unknown; functionCall?: unknown; functionResponse?: { response?: unknown } };
type Content = { role?: string; parts?: unknown };

function partsOf(c: Content): Part[] {
  return Array.isArray(c.parts) ? (c.parts as Part[]) : [];
}

function textOf(parts: Part[]): string {
  return parts
    .filter((p) => typeof p.text === 'string' && p.thought !== true)
    .map((p) => p.text as string)
    .join('\n');
}

const UNTRUSTED_RE = /^\s*<untrusted_context>\n?([\s\S]*?)\n?<\/untrusted_context>\s*$/;

/**
 * A function response's text: Gemini CLI sends an MCP result as `{output: "…"}` (or `{error}`),
 * the tool's text inside `<untrusted_context>` tags, which are dropped here so that `$RESULT` is the
 * tool's own answer, as with the other dialects.
 */
function responseText(r: unknown): string {
  let text = typeof r === 'string' ? r : JSON.stringify(r ?? null);
  if (r && typeof r === 'object') {
    const o = r as { output?: unknown; error?: unknown };
    if (typeof o.output === 'string') text = o.output;
    else if (typeof o.error === 'string') text = o.error;
  }
  return UNTRUSTED_RE.exec(text)?.[1] ?? text;
}

export function geminiEntries(body: { contents?: unknown }): Entry[] {
  const out: Entry[] = [];
  for (const c of Array.isArray(body.contents) ? (body.contents as Content[]) : []) {
    const parts = partsOf(c);
    if (c.role === 'model') {
      out.push({ kind: 'assistant', toolCalls: parts.filter((p) => p.functionCall).length, text: textOf(parts) });
      continue;
    }
    for (const p of parts) if (p.functionResponse) out.push({ kind: 'toolResult', text: responseText(p.functionResponse.response) });
    const text = realUserText(parts.filter((p) => typeof p.text === 'string').map((p) => ({ type: 'text', text: p.text })));
    if (text) out.push({ kind: 'prompt', text });
  }
  return out;
}

export function geminiTools(body: { tools?: unknown }): string[] {
  const out: string[] = [];
  for (const t of Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : []) {
    const decls = (t.functionDeclarations ?? t.function_declarations) as { name?: unknown }[] | undefined;
    for (const d of Array.isArray(decls) ? decls : []) if (typeof d.name === 'string') out.push(d.name);
  }
  return out;
}

export async function writeGemini(
  res: ServerResponse,
  reply: Exclude<Reply, { kind: 'fail' }>,
  opts: { id: string; model: string; stream: boolean; pace: StreamPace },
): Promise<void> {
  const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
  const response = (parts: object[], finishReason?: string) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
    usageMetadata,
    modelVersion: opts.model,
    responseId: opts.id,
  });
  const call = reply.kind === 'tool' ? [{ functionCall: { id: `call_${opts.id}`, name: reply.name, args: reply.input } }] : [];
  if (!opts.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response(reply.kind === 'tool' ? call : [{ text: reply.text }], 'STOP')));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const data = (v: object) => {
    if (!res.destroyed && !res.writableEnded) res.write(`data: ${JSON.stringify(v)}\r\n\r\n`);
  };
  if (reply.kind === 'tool') {
    if (reply.slow) for (let i = 0; i < opts.pace.chunks; i++) if (!(await beat(res, opts.pace))) return;
    data(response(call, 'STOP'));
  } else {
    const pieces = reply.slow ? chunksOf(reply.text, opts.pace) : [reply.text];
    for (let i = 0; i < pieces.length; i++) {
      const last = i === pieces.length - 1;
      if (pieces[i] || last) data(response([{ text: pieces[i] }], last ? 'STOP' : undefined));
      if (reply.slow && !last && !(await beat(res, opts.pace))) return;
    }
  }
  if (!res.destroyed) res.end();
}

export function writeGeminiError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: status, message, status: status === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL' } }));
}
