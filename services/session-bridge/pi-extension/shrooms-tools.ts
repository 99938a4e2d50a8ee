/**
 * pi extension shipped with the shrooms session bridge: gives a pi session the tools of its MCP
 * server `shrooms` (pi has no MCP of its own; an extension registering tools is the supported way).
 *
 *   pi --mode rpc -e <this file>        with SHROOMS_MCP_URL=http://127.0.0.1:PORT/mcp
 *
 * At load it speaks MCP over streamable HTTP (plain JSON-RPC over node:http — no dependencies, pi
 * loads this file through jiti): `initialize`, `tools/list`, then one pi tool per MCP tool, named
 * like Claude Code names them, `mcp__shrooms__<tool>` (SHROOMS_MCP_NAME changes the middle part), with
 * the MCP input schema as its parameters (pi validates plain JSON Schema). A call is proxied to
 * `tools/call`; progress notifications become pi tool updates; `isError` results throw, which is how
 * a pi tool reports an error. No timeout of our own: `ask_agent` may wait ten minutes for an answer,
 * and pi's abort signal cancels the request.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** The part of pi's extension API this file uses. */
interface PiApi {
  registerTool(tool: {
    name: string;
    label: string;
    description: string;
    parameters: unknown;
    execute(
      toolCallId: string,
      params: unknown,
      signal: AbortSignal | undefined,
      onUpdate: ((u: ToolResult) => void) | undefined,
    ): Promise<ToolResult>;
  }): void;
}

interface ToolResult {
  content: ({ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string })[];
  details: unknown;
}

interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

const PROTOCOL_VERSION = '2025-06-18';
const CONNECT_ATTEMPTS = 20;
const CONNECT_RETRY_MS = 500;

class McpHttpClient {
  private sessionId?: string;
  private nextId = 1;

  constructor(private readonly url: URL) {}

  async connect(): Promise<void> {
    this.sessionId = undefined;
    await this.call('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'shrooms-pi-extension', version: '1.0.0' },
    });
    await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  async listTools(): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const r = await this.call('tools/list', cursor ? { cursor } : {});
      tools.push(...((r.tools as McpTool[] | undefined) ?? []));
      cursor = typeof r.nextCursor === 'string' ? r.nextCursor : undefined;
    } while (cursor);
    return tools;
  }

  /** A request; a stateful server that forgot our session (it restarted) gets one reconnect. */
  async call(
    method: string,
    params: Record<string, unknown>,
    opts: { signal?: AbortSignal; onNotification?(m: JsonRpcMessage): void } = {},
  ): Promise<Record<string, unknown>> {
    try {
      return await this.callOnce(method, params, opts);
    } catch (err) {
      if ((err as { status?: number }).status !== 404 || !this.sessionId || method === 'initialize') throw err;
      await this.connect();
      return this.callOnce(method, params, opts);
    }
  }

  private async callOnce(
    method: string,
    params: Record<string, unknown>,
    opts: { signal?: AbortSignal; onNotification?(m: JsonRpcMessage): void },
  ): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    let answer: JsonRpcMessage | undefined;
    await this.post({ jsonrpc: '2.0', id, method, params }, opts.signal, (m) => {
      if (m.id === id && (m.result !== undefined || m.error !== undefined)) answer = m;
      else if (m.method) opts.onNotification?.(m);
    });
    if (!answer) throw new Error(`MCP ${method}: no answer`);
    if (answer.error) throw new Error(`MCP ${method}: ${answer.error.message}`);
    return answer.result ?? {};
  }

  /** POSTs one message; hands every JSON-RPC message of the answer (JSON or SSE) to `onMessage`. */
  private post(msg: JsonRpcMessage, signal?: AbortSignal, onMessage: (m: JsonRpcMessage) => void = () => {}): Promise<void> {
    const body = JSON.stringify(msg);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      'content-length': String(Buffer.byteLength(body)),
    };
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(new Error('aborted'));
      const req = send(this.url, { method: 'POST', headers, signal }, (res: IncomingMessage) => {
        const sid = res.headers['mcp-session-id'];
        if (typeof sid === 'string') this.sessionId = sid;
        const status = res.statusCode ?? 0;
        const type = String(res.headers['content-type'] ?? '');
        res.setEncoding('utf8');
        let text = '';
        let pending = '';
        // SSE: messages are handed on as they arrive, so progress reaches pi while a call waits.
        const onSse = (chunk: string) => {
          pending += chunk.replace(/\r\n/g, '\n');
          let end: number;
          while ((end = pending.indexOf('\n\n')) >= 0) {
            const event = pending.slice(0, end);
            pending = pending.slice(end + 2);
            const data = event
              .split('\n')
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(5).replace(/^ /, ''))
              .join('\n');
            if (data) deliver(data);
          }
        };
        const deliver = (data: string) => {
          try {
            const v = JSON.parse(data) as JsonRpcMessage | JsonRpcMessage[];
            for (const m of Array.isArray(v) ? v : [v]) onMessage(m);
          } catch {
            // Not JSON: nothing we can use.
          }
        };
        res.on('data', (chunk: string) => (type.includes('text/event-stream') && status < 300 ? onSse(chunk) : (text += chunk)));
        res.on('error', reject);
        res.on('end', () => {
          if (status >= 300)
            return reject(Object.assign(new Error(`MCP server answered HTTP ${status}: ${text.slice(0, 300)}`), { status }));
          if (pending.trim()) onSse('\n\n');
          if (text.trim()) deliver(text);
          resolve();
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

function toResult(r: Record<string, unknown>, details: unknown): ToolResult {
  const content: ToolResult['content'] = [];
  for (const c of (r.content as Record<string, unknown>[] | undefined) ?? []) {
    if (c.type === 'text') content.push({ type: 'text', text: String(c.text ?? '') });
    else if (c.type === 'image' && typeof c.data === 'string')
      content.push({ type: 'image', data: c.data, mimeType: String(c.mimeType ?? 'image/png') });
    else content.push({ type: 'text', text: JSON.stringify(c) });
  }
  if (!content.length && r.structuredContent !== undefined) content.push({ type: 'text', text: JSON.stringify(r.structuredContent) });
  return { content, details };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export default async function shroomsTools(pi: PiApi): Promise<void> {
  const raw = process.env.SHROOMS_MCP_URL;
  const server = process.env.SHROOMS_MCP_NAME || 'shrooms';
  if (!raw) {
    process.stderr.write('[shrooms-tools] SHROOMS_MCP_URL is not set; no shrooms tools in this session\n');
    return;
  }
  const client = new McpHttpClient(new URL(raw));
  let tools: McpTool[] | undefined;
  // The bridge starts its MCP server before pi, but be patient with a slow start.
  for (let attempt = 1; !tools; attempt++) {
    try {
      await client.connect();
      tools = await client.listTools();
    } catch (err) {
      if (attempt >= CONNECT_ATTEMPTS) {
        // Never break pi's startup: the session runs, without our tools, and says why.
        process.stderr.write(`[shrooms-tools] cannot reach the MCP server at ${raw}: ${(err as Error).message}\n`);
        return;
      }
      await sleep(CONNECT_RETRY_MS);
    }
  }
  let progressSeq = 0;
  for (const tool of tools) {
    pi.registerTool({
      name: `mcp__${server}__${tool.name}`,
      label: `${server}: ${tool.title ?? tool.name}`,
      description: tool.description ?? `The ${tool.name} tool of the ${server} MCP server.`,
      parameters: tool.inputSchema ?? { type: 'object', properties: {} },
      async execute(_toolCallId, params, signal, onUpdate) {
        const details = { server, tool: tool.name };
        const progressToken = `pi-${++progressSeq}`;
        const r = await client.call(
          'tools/call',
          { name: tool.name, arguments: params ?? {}, _meta: { progressToken } },
          {
            signal,
            onNotification(m) {
              const message = m.method === 'notifications/progress' ? m.params?.message : undefined;
              if (typeof message === 'string') onUpdate?.({ content: [{ type: 'text', text: message }], details });
            },
          },
        );
        const result = toResult(r, details);
        if (r.isError === true)
          throw new Error(result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n') || `${tool.name} failed`);
        return result;
      },
    });
  }
}
