/**
 * A small real MCP server over streamable HTTP on loopback, standing in for the bridge's `shrooms`
 * server in harness tests: the same tool names and argument shapes, no mesh behind them. Every call
 * is recorded so a test can see it arrive with its arguments.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
}

export interface TestMcpServer {
  /** `http://127.0.0.1:PORT/mcp`. */
  url: string;
  calls: ToolCall[];
  waitForCall(match: (c: ToolCall) => boolean, timeoutMs?: number): Promise<ToolCall>;
  close(): Promise<void>;
}

export interface TestMcpOptions {
  /** What `ask_agent` answers; default `ANSWER from <to>: <text>`. */
  askAgent?(args: { to: string; text: string }): Promise<string> | string;
}

export async function startTestMcpServer(opts: TestMcpOptions = {}): Promise<TestMcpServer> {
  const calls: ToolCall[] = [];
  const waiters = new Set<(c: ToolCall) => void>();
  const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
  const record = (tool: string, args: Record<string, unknown>) => {
    const c = { tool, args };
    calls.push(c);
    for (const w of [...waiters]) w(c);
  };

  function build(): McpServer {
    const server = new McpServer({ name: 'shrooms', version: '0.0.0-test' });
    server.registerTool('list_agents', { description: 'Every session on the mesh.', inputSchema: {} }, async () => {
      record('list_agents', {});
      return text('laptop/webapp (claude, idle)');
    });
    server.registerTool('task_status', { description: 'State of a task you asked.', inputSchema: { task: z.string() } }, async (args) => {
      record('task_status', args);
      return text(`${args.task}: TASK_STATE_WORKING`);
    });
    server.registerTool(
      'task_update',
      {
        description: 'Finish a task you were given.',
        inputSchema: { task: z.string().optional(), status: z.enum(['done', 'blocked', 'failed']), text: z.string() },
      },
      async (args) => {
        record('task_update', args);
        return text(`task ${args.task ?? '(current)'} is now ${args.status}`);
      },
    );
    server.registerTool(
      'ask_agent',
      { description: 'Give another session a task.', inputSchema: { to: z.string(), text: z.string(), wait: z.boolean().optional() } },
      async (args) => {
        record('ask_agent', args);
        return text(opts.askAgent ? await opts.askAgent(args) : `ANSWER from ${args.to}: ${args.text}`);
      },
    );
    server.registerTool('echo', { description: 'Echoes its text.', inputSchema: { text: z.string() } }, async (args) => {
      record('echo', args);
      return text(`MCP_ECHO: ${args.text}`);
    });
    return server;
  }

  // Stateless, like the bridge's server: a fresh server and transport per request.
  const http = createServer((req, res) => {
    void (async function serve() {
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const server = build();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  http.requestTimeout = 0;
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    waitForCall(match, timeoutMs = 60_000) {
      const found = calls.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`MCP: no matching call within ${timeoutMs} ms (calls: ${JSON.stringify(calls)})`));
        }, timeoutMs);
        const check = (c: ToolCall) => {
          if (!match(c)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(c);
        };
        waiters.add(check);
      });
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
