/**
 * The server over streamable HTTP on loopback (`http://127.0.0.1:PORT/mcp`), for harnesses without
 * stdio MCP (pi through our extension) and for Claude Code's `--mcp-config` http form. The bridge
 * hosts it in its own process for its harness.
 *
 * Stateless: a fresh server per request over one shared client. Nothing to lose when the bridge
 * restarts (a stateful server would answer the harness's old session id with 404), and progress
 * notifications still reach the caller on the request's own SSE response. Host and Origin are
 * checked so a web page in a local browser cannot drive it (DNS rebinding).
 *
 * The MCP SDK and the tools (a few hundred modules, ~25 MB resident) load on the first request: a
 * bridge whose harness never calls its tools (echo) never holds them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerBeforeTheRest } from '@shrooms/runtime';
import type * as Transport from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { resolveContext, type McpToolContext } from './context.js';
import type * as Server from './server.js';

export const MCP_PATH = '/mcp';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);
const MAX_BODY_BYTES = 1024 * 1024;

let sdk: Promise<[typeof Transport, typeof Server]> | undefined;
/** The SDK's transport and our server, imported once, when first asked for. */
const loadSdk = () => (sdk ??= Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('./server.js')]));

export interface McpHttpServerOptions {
  /** 0 (default) = any free port. */
  port?: number;
  /** Loopback only: 127.0.0.1 (default), ::1 or localhost. */
  host?: string;
  context?: McpToolContext;
}

export interface McpHttpServer {
  /** `http://127.0.0.1:PORT/mcp`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

function jsonError(res: ServerResponse, status: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * The request's JSON body. Past MAX_BODY_BYTES it is refused at once (413), without reading on: the
 * rest is then read and dropped after the answer (`answerBeforeTheRest`), so that the connection is
 * not reset under it.
 */
function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(c);
      req.off('data', onData).off('end', onEnd);
      reject(Object.assign(new Error(`request body is larger than ${MAX_BODY_BYTES} bytes`), { status: 413 }));
    };
    const onEnd = () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(Object.assign(new Error('the body is not valid JSON'), { status: 400 }));
      }
    };
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

export async function startMcpHttpServer(opts: McpHttpServerOptions = {}): Promise<McpHttpServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!LOOPBACK_HOSTS.has(host)) throw new Error(`the MCP server listens on loopback only (127.0.0.1, ::1, localhost), not ${host}`);
  const ctx = resolveContext(opts.context);
  let allowedHosts: string[] = [];
  let allowedOrigins: string[] = [];

  const http = createServer((req, res) => {
    void (async function serve() {
      const path = (req.url ?? '').split('?')[0];
      if (path !== MCP_PATH) return jsonError(res, 404, `not found; the MCP endpoint is ${MCP_PATH}`);
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        return jsonError(res, 405, 'this server is stateless: POST JSON-RPC messages to /mcp');
      }
      let body: unknown;
      try {
        body = await readBody(req);
      } catch (err) {
        answerBeforeTheRest(req, res);
        return jsonError(res, (err as { status?: number }).status ?? 400, (err as Error).message);
      }
      const [{ StreamableHTTPServerTransport }, { buildMcpServer }] = await loadSdk();
      const server = buildMcpServer(ctx);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableDnsRebindingProtection: true,
        allowedHosts,
        allowedOrigins,
      });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
      } catch (err) {
        if (!res.headersSent) jsonError(res, 500, `internal error: ${(err as Error).message}`);
      }
    })();
  });
  http.requestTimeout = 0; // a tool call may wait 10 minutes for a task

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const names = ['127.0.0.1', 'localhost', '[::1]'];
  allowedHosts = names.map((h) => `${h}:${port}`);
  allowedOrigins = names.map((h) => `http://${h}:${port}`);
  const urlHost = host === '::1' ? '[::1]' : host;
  return {
    url: `http://${urlHost}:${port}${MCP_PATH}`,
    port,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
      await ctx.client.close();
    },
  };
}
