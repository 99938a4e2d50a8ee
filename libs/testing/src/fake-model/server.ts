/**
 * A fake model server on loopback for driving the real coding-agent CLIs in tests, with no real
 * model and no network. One port speaks Anthropic Messages (`POST …/v1/messages`, streamed or not,
 * plus `count_tokens`), OpenAI Chat Completions (`POST …/chat/completions`, `GET …/models`), the
 * OpenAI Responses API (`POST …/responses`) and the Gemini API
 * (`POST …/models/<model>:streamGenerateContent` / `:generateContent`).
 * What it answers is steered by the prompt (see `script.ts`) or by a test's own `respond` hook.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicEntries, anthropicTools, writeAnthropic, writeAnthropicError } from './anthropic.js';
import { geminiEntries, geminiTools, writeGemini, writeGeminiError } from './gemini.js';
import { openaiEntries, openaiTools, writeOpenai, writeOpenaiError } from './openai.js';
import { responsesEntries, responsesTools, writeResponses, writeResponsesError } from './responses.js';
import type { StreamPace } from './pace.js';
import { plan, type Conversation, type Entry, type Reply, type Script } from './script.js';

export type FakeApi = 'anthropic' | 'openai' | 'responses' | 'gemini';

export interface RecordedRequest {
  /** 1-based sequence number over all model requests (the `n` of `FAKE_REPLY(n)`). */
  n: number;
  api: FakeApi;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  stream: boolean;
  model?: string;
  /** Tool names the client offered. */
  tools: string[];
  entries: Entry[];
  conversation: Conversation;
  script: Script;
  reply: Reply;
  /** The client closed the connection before a slow reply was finished (a cancel). */
  aborted: boolean;
  /** Epoch ms, for ordering only. */
  at: number;
}

export interface RespondContext {
  n: number;
  api: FakeApi;
  body: Record<string, unknown>;
  entries: Entry[];
  conversation: Conversation;
  tools: string[];
  /** What the directive language would answer. */
  planned: Reply;
}

export interface FakeModelOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** SLOW pacing; default 20 pieces 500 ms apart (10 s: time to cancel). */
  slow?: Partial<StreamPace>;
  /** Overrides the directive language for a request when it returns a reply. */
  respond?(ctx: RespondContext): Reply | undefined | Promise<Reply | undefined>;
  /** Called for every model request once answered (also for failures). */
  onRequest?(req: RecordedRequest): void;
}

export interface FakeModel {
  /** `http://127.0.0.1:PORT`, what `ANTHROPIC_BASE_URL` wants; OpenAI clients use `${url}/v1`. */
  url: string;
  port: number;
  /** Every model request so far, in arrival order. */
  requests: RecordedRequest[];
  /** Resolves with the first request (already recorded or future) that matches. */
  waitForRequest(match: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

/** Each dialect: how to read a request, and how to answer it. */
const WIRES = {
  anthropic: { entries: anthropicEntries, tools: anthropicTools, write: writeAnthropic, error: writeAnthropicError },
  openai: { entries: openaiEntries, tools: openaiTools, write: writeOpenai, error: writeOpenaiError },
  responses: { entries: responsesEntries, tools: responsesTools, write: writeResponses, error: writeResponsesError },
  gemini: { entries: geminiEntries, tools: geminiTools, write: writeGemini, error: writeGeminiError },
} satisfies Record<FakeApi, unknown>;

export async function startFakeModel(opts: FakeModelOptions = {}): Promise<FakeModel> {
  const pace: StreamPace = { chunks: opts.slow?.chunks ?? 20, delayMs: opts.slow?.delayMs ?? 500 };
  const requests: RecordedRequest[] = [];
  const waiters = new Set<(r: RecordedRequest) => void>();
  let n = 0;

  function record(r: RecordedRequest): void {
    requests.push(r);
    opts.onRequest?.(r);
    for (const w of [...waiters]) w(r);
  }

  async function model(
    api: FakeApi,
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
    path: string,
  ): Promise<void> {
    const seq = ++n;
    const wire = WIRES[api];
    const entries = wire.entries(body);
    const tools = wire.tools(body);
    const planned = plan({ entries, offeredTools: tools, n: seq });
    const reply =
      (await opts.respond?.({ n: seq, api, body, entries, conversation: planned.conversation, tools, planned: planned.reply })) ??
      planned.reply;
    // Gemini says "stream" in the method name (`:streamGenerateContent`), the others in the body.
    const stream = api === 'gemini' ? path.includes(':streamGenerateContent') : body.stream === true;
    const rec: RecordedRequest = {
      n: seq,
      api,
      method: req.method ?? '',
      path,
      headers: req.headers,
      body,
      stream,
      model: typeof body.model === 'string' ? body.model : api === 'gemini' ? /models\/([^:/]+):/.exec(path)?.[1] : undefined,
      tools,
      entries,
      conversation: planned.conversation,
      script: planned.script,
      reply,
      aborted: false,
      at: Date.now(),
    };
    // Recorded before answering, so a test can act (cancel) while a slow reply is still streaming.
    record(rec);
    if (reply.kind === 'fail') {
      const status = reply.status ?? 500;
      const message = reply.message ?? 'fake failure';
      return wire.error(res, status, message);
    }
    res.once('close', () => {
      if (!res.writableFinished) rec.aborted = true;
    });
    const w = { id: `fake_${seq}`, model: rec.model ?? 'fake-model', stream, pace, body };
    await wire.write(res, reply, w);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> = {};
    try {
      const v = raw ? (JSON.parse(raw) as unknown) : {};
      if (v && typeof v === 'object') body = v as Record<string, unknown>;
    } catch {
      // Not JSON: routes below answer anyway.
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname.replace(/\/+$/, '');
    const json = (status: number, v: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    if (req.method === 'POST' && path.endsWith('/messages/count_tokens')) return json(200, { input_tokens: Math.ceil(raw.length / 4) });
    if (req.method === 'POST' && path.endsWith('/messages')) return model('anthropic', req, res, body, url.pathname);
    if (req.method === 'POST' && path.endsWith('/chat/completions')) return model('openai', req, res, body, url.pathname);
    if (req.method === 'POST' && path.endsWith('/responses')) return model('responses', req, res, body, url.pathname);
    if (req.method === 'POST' && /:countTokens$/.test(path)) return json(200, { totalTokens: Math.ceil(raw.length / 4) });
    if (req.method === 'POST' && /:(stream)?[gG]enerateContent$/.test(path)) return model('gemini', req, res, body, url.pathname);
    if (req.method === 'GET' && path.endsWith('/models')) {
      return json(200, {
        object: 'list',
        data: [{ id: 'fake-model', object: 'model', type: 'model', display_name: 'Fake', created_at: '2025-01-01T00:00:00Z' }],
        has_more: false,
      });
    }
    // Claude Code probes the base URL with HEAD first.
    if (req.method === 'HEAD' || (req.method === 'GET' && path === '')) {
      res.writeHead(200);
      return void res.end();
    }
    json(404, { type: 'error', error: { type: 'not_found_error', message: `fake model: no route ${req.method} ${url.pathname}` } });
  }

  // Asked of Node, not imported: an ES import of node:http loads undici (for its WebSocket export) into
  // every process that imports this package, `up` too (index.test.ts).
  const server = process.getBuiltinModule('node:http').createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: `fake model crashed: ${(e as Error).message}` } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    requests,
    waitForRequest(match, timeoutMs = 60_000) {
      const found = requests.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake model: no matching request within ${timeoutMs} ms (${requests.length} seen)`));
        }, timeoutMs);
        const check = (r: RecordedRequest) => {
          if (!match(r)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(r);
        };
        waiters.add(check);
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
