import { describe, expect, it } from 'vitest';
import { acpAgent, codex, gemini, opencode, splitCommandLine, toolWaitSeconds } from './acp-agents.js';
import { AcpMessageSchema } from './acp-events.js';

describe('the ACP agent presets', () => {
  it('splits an agent command line on whitespace, keeping quoted words and escapes whole', () => {
    expect(splitCommandLine(`node "/opt/my agent/cli.js" --acp 'a b' c\\ d`)).toEqual([
      'node',
      '/opt/my agent/cli.js',
      '--acp',
      'a b',
      'c d',
    ]);
    expect(() => splitCommandLine('agent "unclosed')).toThrow(/unclosed/);
  });

  it('picks a preset by name, a command line over a name, and refuses neither', () => {
    expect(acpAgent({ agent: 'gemini' })).toBe(gemini);
    expect(acpAgent({ agent: 'opencode' })).toBe(opencode);
    expect(acpAgent({ agent: 'gemini', agentCommand: 'my-agent --acp' }).name).toMatch(/^command:my-agent#[0-9a-f]{8}$/);
    expect(acpAgent({ agent: 'codex' })).toBe(codex);
    expect(() => acpAgent({ agent: 'qwen' })).toThrow(/--agent gemini\|opencode\|codex or --agent-command/);
  });

  it("ends the session's tool waits a minute before Gemini CLI's and Codex's own tool timeouts, and leaves OpenCode's alone", () => {
    expect(toolWaitSeconds({ agent: 'gemini' })).toBe(540);
    expect(toolWaitSeconds({ agent: 'codex' })).toBe(240);
    expect(toolWaitSeconds({ agent: 'opencode' })).toBeUndefined();
    expect(toolWaitSeconds({ agent: 'gemini', agentCommand: 'my-agent --acp' })).toBeUndefined();
  });

  it('names an agent given by its command line without the rest of the line, which may carry a key', () => {
    const a = acpAgent({ agentCommand: 'env OPENAI_API_KEY=sk-x /usr/bin/codex-acp' }).name;
    expect(a).toMatch(/^command:env#[0-9a-f]{8}$/);
    expect(acpAgent({ agentCommand: 'env OPENAI_API_KEY=sk-y /usr/bin/codex-acp' }).name).not.toBe(a);
  });

  it("tells Gemini CLI's calls of our tools by the call id, never by the title a shell command can choose", () => {
    expect(gemini.shroomsTool!({ toolCallId: 'mcp_shrooms_task_update__call_1', title: 'task_update (shrooms MCP Server)' })).toBe(
      'task_update',
    );
    expect(gemini.shroomsTool!({ toolCallId: 'mcp_shrooms_list_agents-1796111898449-3' })).toBe('list_agents');
    expect(
      gemini.shroomsTool!({ toolCallId: 'run_shell_command-1796111898449-4', title: 'task_update (shrooms MCP Server)' }),
    ).toBeUndefined();
    expect(gemini.shroomsTool!({ toolCallId: 'mcp_other_task_update__x' })).toBeUndefined();
  });
});

describe('Codex through codex-acp', () => {
  const approval = (server: string, kind = 'mcp_tool_call') => ({
    toolCallId: 'call_1',
    title: 'Approve MCP tool call',
    rawInput: { server_name: server, request: { _meta: { codex_approval_kind: kind } } },
  });
  it('tells its calls of our tools by the approval kind, the server and the announced tool', () => {
    const announced = { toolCallId: 'call_1', rawInput: { server: 'shrooms', tool: 'task_update' } };
    expect(codex.shroomsTool!(approval('shrooms'), announced)).toBe('task_update');
    expect(codex.shroomsTool!(approval('other'), announced)).toBeUndefined();
    expect(codex.shroomsTool!(approval('shrooms', 'exec'), announced)).toBeUndefined();
    expect(codex.shroomsTool!(approval('shrooms'), undefined)).toBeUndefined();
  });
});

describe('the ACP stream', () => {
  it('reads requests, answers and notifications apart, and keeps an odd field from dropping a message', () => {
    expect(AcpMessageSchema.parse({ jsonrpc: '2.0', id: 0, method: 'session/request_permission', params: {} }).kind).toBe('request');
    expect(AcpMessageSchema.parse({ jsonrpc: '2.0', id: 'turn-1', result: { stopReason: 'end_turn' } }).kind).toBe('response');
    expect(AcpMessageSchema.parse({ jsonrpc: '2.0', method: 'session/update', params: { update: {} } }).kind).toBe('notification');
    const odd = AcpMessageSchema.parse({ jsonrpc: '2.0', id: 3, error: 'not an object' });
    expect(odd).toMatchObject({ kind: 'response', id: 3, error: undefined });
  });
});
