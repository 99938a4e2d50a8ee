/**
 * The session's `shrooms` MCP server over stdio, for an ACP agent that takes MCP servers over stdio
 * only: a relay to the bridge's own server over streamable HTTP (`SHROOMS_MCP_URL`), which knows
 * the task at hand. Tools are listed and called there; progress notifications come back (ask_agent
 * may wait ten minutes for its answer, so the call's deadline moves with each one). Plain
 * JavaScript on the MCP SDK, run with the bridge's Node; nothing but the protocol on stdout.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const CALL_TIMEOUT_MS = 15 * 60_000;

const url = process.env.SHROOMS_MCP_URL;
if (!url) {
  process.stderr.write('shrooms mcp relay: SHROOMS_MCP_URL is not set\n');
  process.exit(1);
}
const client = new Client({ name: 'shrooms-mcp-relay', version: '0.1.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const server = new Server({ name: 'shrooms', version: '0.1.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, (req) => client.listTools(req.params));
server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
  const token = req.params._meta?.progressToken;
  return client.callTool(req.params, undefined, {
    signal: extra.signal,
    timeout: CALL_TIMEOUT_MS,
    resetTimeoutOnProgress: true,
    onprogress:
      token === undefined
        ? undefined
        : (p) => void extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } }),
  });
});
const transport = new StdioServerTransport();
transport.onclose = () => void client.close().finally(() => process.exit(0));
process.stdin.once('end', () => void client.close().finally(() => process.exit(0)));
await server.connect(transport);
