import { describe, expect, it } from 'vitest';
import type { McpToolContext } from './context.js';
import { useMcpInMemory } from '../testing/mcp.js';

// Nothing listens on port 1: any call that reaches for the gateway fails at once.
const offline: McpToolContext = {
  machine: 'box',
  session: 'alpha',
  gatewayUrl: 'http://127.0.0.1:1',
  env: { NATS_URL: 'nats://127.0.0.1:1' },
};

const connect = useMcpInMemory();

const meta = (r: unknown) => (r as { _meta?: Record<string, { key: string }> })._meta?.['shrooms/error'];

describe('the shrooms MCP server', () => {
  it('offers the eight tools, each with an input and an output schema', async () => {
    const client = await connect(offline);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'ask_agent',
      'cancel_schedule',
      'list_agents',
      'list_schedules',
      'schedule_task',
      'task_ack',
      'task_status',
      'task_update',
    ]);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(t.description?.length).toBeGreaterThan(20);
    }
  });

  it("refuses task_update for another session's task before asking the gateway", async () => {
    const client = await connect(offline);
    const r = await client.callTool({ name: 'task_update', arguments: { task: 'box/beta:m-1', status: 'done', text: 'x' } });
    expect(r.isError).toBe(true);
    expect(meta(r)?.key).toBe('UPDATE_FORBIDDEN');
    expect((r.content as { text: string }[])[0]!.text).toMatch(
      /^UPDATE_FORBIDDEN: box\/beta:m-1 is a task of box\/beta; box\/alpha may only update its own tasks/,
    );
  });

  it("hands the session's own task_update to its bridge in-process, never to the gateway", async () => {
    const calls: unknown[][] = [];
    const client = await connect({
      ...offline,
      worker: {
        update: async (taskId, status, text) => {
          calls.push([taskId, status, text]);
          return { id: taskId, contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } as never;
        },
      },
    });
    const r = await client.callTool({ name: 'task_update', arguments: { task: 'alpha:m-1', status: 'done', text: 'all done' } });
    expect(r.isError).toBeFalsy();
    expect(calls).toEqual([['alpha:m-1', 'done', 'all done']]);
    const other = await client.callTool({ name: 'task_update', arguments: { task: 'box/beta:m-1', status: 'done', text: 'x' } });
    expect(meta(other)?.key).toBe('UPDATE_FORBIDDEN');
    expect(calls).toHaveLength(1);
  });

  it('refuses task_update for a task on another machine', async () => {
    const client = await connect(offline);
    const r = await client.callTool({ name: 'task_update', arguments: { task: 'elsewhere/alpha:m-1', status: 'failed', text: 'x' } });
    expect(meta(r)?.key).toBe('UPDATE_FORBIDDEN');
  });

  it('asks for a task name when task_update has none and no task is current', async () => {
    const client = await connect(offline);
    const r = await client.callTool({ name: 'task_update', arguments: { status: 'done', text: 'x' } });
    expect(meta(r)?.key).toBe('INVALID_PARAMS');
  });

  it('says the gateway cannot be reached, and what to do', async () => {
    const client = await connect(offline);
    const r = await client.callTool({ name: 'list_agents', arguments: {} });
    expect(r.isError).toBe(true);
    expect(meta(r)?.key).toBe('GATEWAY_UNREACHABLE');
    expect((r.content as { text: string }[])[0]!.text).toMatch(
      /cannot reach the gateway at http:\/\/127\.0\.0\.1:1 — is `shrooms-agent up` running\?/,
    );
  });

  it('asks the gateway for schedules, and says so when it cannot reach it', async () => {
    const client = await connect(offline);
    const r = await client.callTool({
      name: 'schedule_task',
      arguments: { to: 'box/beta', text: 'hi', at: '2030-01-01T08:00', zone: 'Europe/Berlin' },
    });
    expect(meta(r)?.key).toBe('GATEWAY_UNREACHABLE');
    const l = await client.callTool({ name: 'list_schedules', arguments: {} });
    expect(meta(l)?.key).toBe('GATEWAY_UNREACHABLE');
  });

  it('rejects a bad task name as invalid params', async () => {
    const client = await connect(offline);
    const r = await client.callTool({ name: 'task_status', arguments: { task: 'not a task' } });
    expect(meta(r)?.key).toBe('INVALID_PARAMS');
  });
});
