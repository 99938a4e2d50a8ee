import { describe, expect, it } from 'vitest';
import { ClaudeEventSchema } from './claude-events.js';
import { PiEventSchema } from './pi-events.js';

// Lines as the real CLIs print them (Claude Code 2.1.197, pi 0.73.1), trimmed to what matters.
describe('the Claude Code stream schema', () => {
  it('reads the lines of a turn with only the fields each carries', () => {
    const lines = [
      { type: 'system', subtype: 'session_state_changed', state: 'running', session_id: 's', uuid: 'u' },
      { type: 'system', subtype: 'init', cwd: '/x', tools: ['mcp__echo__echo'], mcp_servers: [{ name: 'echo', status: 'connected' }] },
      { type: 'user', uuid: 'ours', isReplay: true, message: { role: 'user', content: 'hi' } },
      { type: 'assistant', message: { id: 'msg_1', role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x', input: {} }] } },
      { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [] }] } },
      { type: 'assistant', message: { content: [{ type: 'text', text: 'FAKE_REPLY(1): hi' }] } },
      { type: 'result', subtype: 'success', is_error: false, result: 'FAKE_REPLY(1): hi', terminal_reason: 'completed', usage: {} },
      { type: 'control_response', response: { subtype: 'success', request_id: 'shrooms-1', response: {} } },
      { type: 'control_request', request_id: 'r1', request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'ls' } } },
      { type: 'control_cancel_request', request_id: 'r1' },
    ];
    for (const l of lines) expect(ClaudeEventSchema.safeParse(l).success, JSON.stringify(l)).toBe(true);
  });

  it('keeps an event whose field we read comes in another shape, that field read as absent', () => {
    const r = ClaudeEventSchema.parse({ type: 'result', is_error: 'yes', result: { odd: true }, subtype: 'error_during_execution' });
    expect(r).toMatchObject({ type: 'result', is_error: undefined, result: undefined, subtype: 'error_during_execution' });
  });

  it('skips line types it does not read', () => {
    expect(ClaudeEventSchema.safeParse({ type: 'stream_event', event: {} }).success).toBe(false);
  });
});

describe('the pi stream schema', () => {
  it('reads responses, message and run ends, dialogs and extension errors', () => {
    const lines = [
      { type: 'response', id: 'shrooms-1', command: 'get_state', success: true, data: { sessionId: 'x' } },
      { type: 'response', command: 'prompt', success: false, error: 'busy' },
      { type: 'message_end', message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }], stopReason: 'stop' } },
      {
        type: 'agent_end',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [], stopReason: 'aborted' },
        ],
      },
      { type: 'extension_ui_request', id: 'q1', method: 'confirm', title: 'Sure?' },
      { type: 'extension_error', extensionPath: '/e.ts', event: 'tool_call', error: 'boom' },
    ];
    for (const l of lines) expect(PiEventSchema.safeParse(l).success, JSON.stringify(l)).toBe(true);
  });

  it('keeps a run end whose messages are odd, reading what it can', () => {
    const r = PiEventSchema.parse({ type: 'agent_end', messages: ['not a message', { role: 'assistant', stopReason: 7 }] });
    expect(r.type === 'agent_end' && r.messages?.map((m) => [m.role, m.stopReason])).toEqual([
      [undefined, undefined],
      ['assistant', undefined],
    ]);
  });
});
