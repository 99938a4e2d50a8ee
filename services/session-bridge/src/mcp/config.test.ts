import { describe, expect, it } from 'vitest';
import { MCP_URL_ENV, piExtensionFile, sessionConfig } from './config.js';

const base = {
  machine: 'laptop',
  session: 'web',
  gatewayUrl: 'http://127.0.0.1:7387',
  command: { command: '/usr/bin/node', args: ['/x/main.js'] },
  piExtension: '/x/shrooms-tools.ts',
};

describe('session configuration', () => {
  it('gives Claude Code the stdio server with the session named in its environment', () => {
    const c = sessionConfig(base);
    expect(c.claude.mcpConfig.mcpServers.shrooms).toEqual({
      type: 'stdio',
      command: '/usr/bin/node',
      args: ['/x/main.js', 'mcp'],
      env: { SHROOMS_MACHINE: 'laptop', SHROOMS_AGENT_SESSION: 'web', SHROOMS_GATEWAY_URL: 'http://127.0.0.1:7387' },
    });
    expect(c.claude.args.slice(2)).toEqual([
      '--strict-mcp-config',
      '--allowedTools',
      'mcp__shrooms__list_agents,mcp__shrooms__task_status,mcp__shrooms__task_update,mcp__shrooms__task_ack,mcp__shrooms__list_schedules',
    ]);
  });

  it('gives both harnesses the HTTP form when one runs', () => {
    const c = sessionConfig({ ...base, mcpUrl: 'http://127.0.0.1:7390/mcp', systemNote: 'note' });
    expect(c.claude.mcpConfig.mcpServers.shrooms).toEqual({ type: 'http', url: 'http://127.0.0.1:7390/mcp' });
    expect(c.claude.args).toContain('--append-system-prompt');
    expect(c.pi.env[MCP_URL_ENV]).toBe('http://127.0.0.1:7390/mcp');
    expect(c.pi.args).toEqual(['-e', '/x/shrooms-tools.ts']);
  });

  it('knows where the pi extension lives', () => {
    expect(piExtensionFile()).toMatch(/services\/session-bridge\/pi-extension\/shrooms-tools\.ts$/);
  });
});
