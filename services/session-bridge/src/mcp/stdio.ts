/**
 * `shrooms-agent mcp`: the server over stdio, for Claude Code's `--mcp-config` and any MCP client.
 * stdout carries the protocol only — nothing here (or below) may print to it.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Readable, Writable } from 'node:stream';
import type { McpToolContext } from './context.js';
import { createMcpServer } from './server.js';

export interface McpStdioServer {
  /** Resolves when the client closes the connection (stdin ends). */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function createMcpStdioServer(
  context: McpToolContext = {},
  io: { stdin?: Readable; stdout?: Writable } = {},
): Promise<McpStdioServer> {
  const { server, context: resolved } = createMcpServer(context);
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  let done!: () => void;
  const closed = new Promise<void>((r) => (done = r));
  transport.onclose = () => done();
  (io.stdin ?? process.stdin).once('end', () => void server.close().finally(done));
  await server.connect(transport);
  return {
    closed,
    async close() {
      await server.close();
      await resolved.client.close();
      done();
    },
  };
}
