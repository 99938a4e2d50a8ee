/**
 * For the tools' unit tests: the session's MCP server (`createMcpServer`) and the MCP SDK's own
 * client, joined in memory; closed after each test of the file.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach } from 'vitest';
import type { McpToolContext } from '../mcp/context.js';
import { createMcpServer } from '../mcp/server.js';

/** Returns `connect(ctx)`: a client of the tools `ctx` gives, closed (with its server) after the test. */
export function useMcpInMemory(): (ctx: McpToolContext) => Promise<Client> {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });
  return async function connect(ctx) {
    const { server, context } = createMcpServer(ctx);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'test', version: '1' });
    await Promise.all([server.connect(a), client.connect(b)]);
    close = async () => {
      await client.close();
      await server.close();
      await context.client.close();
    };
    return client;
  };
}
