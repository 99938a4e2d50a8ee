/**
 * `@a2a-js/sdk` 0.3.x — the v0.3 line most callers still run — through its `A2AClient` as its
 * README uses it (`A2AClient.fromCardUrl` on the session card): send, stream, get, cancel,
 * resubscribe. The same task then reads in v1.0 (one ledger), and a v1.0 task reads in v0.3.
 * Then its newer `ClientFactory` choosing the card's HTTP+JSON interface (its `RestTransport`).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { A2AClient, type Client, ClientFactory, ClientFactoryOptions, RestTransport, TaskNotFoundError } from '@a2a-js/sdk-v03/client';
import { rpc } from '@shrooms/testing';

const endpoint = inject('endpoint');
const cardUrl = `${endpoint}.well-known/agent-card.json`;
const v1 = endpoint.replace(/\/$/, '');

const send = (text: string, configuration?: Record<string, unknown>) => ({
  message: {
    kind: 'message' as const,
    messageId: `sdk03-${randomUUID()}`,
    role: 'user' as const,
    parts: [{ kind: 'text' as const, text }],
  },
  ...(configuration ? { configuration } : {}),
});

async function collect<T>(it: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

describe('the v0.3 A2AClient', () => {
  let client: A2AClient;
  const connect = async () => (client ??= await A2AClient.fromCardUrl(cardUrl));

  it('reads the v0.3 fields of the session card', async () => {
    const c = await connect();
    const card = await c.getAgentCard();
    expect(card).toMatchObject({ url: v1, preferredTransport: 'JSONRPC', protocolVersion: '0.3.0' });
    expect(card.capabilities.streaming).toBe(true);
  });

  it('sends a message and gets the completed task in v0.3 shape', async () => {
    const c = await connect();
    const res = await c.sendMessage(send('hello v0.3'));
    if ('error' in res) throw new Error(res.error.message);
    const task = res.result as any;
    expect(task).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect(task.artifacts[0].parts[0]).toEqual({ kind: 'text', text: 'hello v0.3' });
    expect(task.history?.every((m: any) => m.kind === 'message' && ['user', 'agent'].includes(m.role)) ?? true).toBe(true);

    const got = await c.getTask({ id: task.id });
    if ('error' in got) throw new Error(got.error.message);
    expect(got.result).toMatchObject({ kind: 'task', id: task.id, status: { state: 'completed' } });

    // One ledger: the v1.0 binding reads the same task.
    const same = await rpc(v1, 'GetTask', { id: task.id });
    expect(same.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect(same.result.artifacts[0].parts[0]).toEqual({ text: 'hello v0.3' });
  });

  it('streams: the task, then status updates, the last one final and completed', async () => {
    const c = await connect();
    const events = (await collect(c.sendMessageStream(send('streamed v0.3')))) as any[];
    expect(events[0].kind).toBe('task');
    const last = events.at(-1);
    expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    expect(events.filter((e) => e.kind === 'status-update' && e.final)).toHaveLength(1);
    const art = events.find((e) => e.kind === 'artifact-update');
    if (art) expect(art.artifact.parts[0]).toEqual({ kind: 'text', text: 'streamed v0.3' });
  });

  it('cancels an open task and answers a second cancel of it the same', async () => {
    const c = await connect();
    const res = await c.sendMessage(send('quiet: stays open', { blocking: false }));
    if ('error' in res) throw new Error(res.error.message);
    const id = (res.result as any).id;
    expect(['submitted', 'working']).toContain((res.result as any).status.state);
    const canceled = await c.cancelTask({ id });
    if ('error' in canceled) throw new Error(canceled.error.message);
    expect(canceled.result).toMatchObject({ kind: 'task', status: { state: 'canceled' } });
  });

  it('resubscribes to a blocked task: the task as it stands, then the answer completing it', async () => {
    const c = await connect();
    const res = await c.sendMessage(send('blocked: which branch?'));
    if ('error' in res) throw new Error(res.error.message);
    const task = res.result as any;
    expect(task.status.state).toBe('input-required');
    const events: any[] = [];
    const sub = c.resubscribeTask({ id: task.id });
    const first = await sub.next();
    expect(first.value).toMatchObject({ kind: 'task', id: task.id, status: { state: 'input-required' } });
    const answer = await c.sendMessage({ message: { ...send('main').message, taskId: task.id } });
    if ('error' in answer) throw new Error(answer.error.message);
    for await (const e of sub) events.push(e);
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
  });

  it('answers an unknown task with TaskNotFound (-32001), in the v0.3 error shape', async () => {
    const c = await connect();
    const res = await c.getTask({ id: `demo:${randomUUID()}` });
    expect('error' in res && res.error.code).toBe(-32001);
  });

  it('reads a task asked in v1.0', async () => {
    const c = await connect();
    const asked = await rpc(v1, 'SendMessage', {
      message: { messageId: `v1-${randomUUID()}`, role: 'ROLE_USER', parts: [{ text: 'from v1' }] },
    });
    const got = await c.getTask({ id: asked.result.task.id });
    if ('error' in got) throw new Error(got.error.message);
    expect(got.result).toMatchObject({
      kind: 'task',
      status: { state: 'completed' },
      artifacts: [{ parts: [{ kind: 'text', text: 'from v1' }] }],
    });
  });
});

describe('the v0.3 Client over HTTP+JSON (ClientFactory preferring RestTransport)', () => {
  let client: Client;
  const connect = async () =>
    (client ??= await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }),
    ).createFromUrl(endpoint));

  it('sends, gets and streams over /v1/, in v0.3 shapes, on the same ledger', async () => {
    const c = await connect();
    expect((c as unknown as { transport: unknown }).transport).toBeInstanceOf(RestTransport);
    const task = (await c.sendMessage(send('hello v0.3 rest'))) as any;
    expect(task).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect(task.artifacts[0].parts[0]).toEqual({ kind: 'text', text: 'hello v0.3 rest' });
    expect(await c.getTask({ id: task.id })).toMatchObject({ kind: 'task', id: task.id, status: { state: 'completed' } });
    expect((await rpc(v1, 'GetTask', { id: task.id })).result.artifacts[0].parts[0]).toEqual({ text: 'hello v0.3 rest' });
    const events = (await collect(c.sendMessageStream(send('streamed v0.3 rest')))) as any[];
    expect(events[0].kind).toBe('task');
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
  });

  it('ends a stream on a final status update also when its task was done before the stream began', async () => {
    const c = await connect();
    // The same message again: its task is already completed, so the stream's first event closes it.
    const once = send('once over rest');
    await c.sendMessage(once);
    const events = (await collect(c.sendMessageStream(once))) as any[];
    expect(events).toMatchObject([
      { kind: 'task', status: { state: 'completed' } },
      { kind: 'status-update', final: true, status: { state: 'completed' } },
    ]);
  });

  it('cancels, resubscribes to a blocked task, and types an unknown task as TaskNotFound', async () => {
    const c = await connect();
    const open = (await c.sendMessage(send('quiet: stays open', { blocking: false }))) as any;
    expect(await c.cancelTask({ id: open.id })).toMatchObject({ kind: 'task', status: { state: 'canceled' } });
    const blocked = (await c.sendMessage(send('blocked: which branch?'))) as any;
    expect(blocked.status.state).toBe('input-required');
    const sub = c.resubscribeTask({ id: blocked.id });
    expect((await sub.next()).value).toMatchObject({ kind: 'task', id: blocked.id, status: { state: 'input-required' } });
    await c.sendMessage({ message: { ...send('main').message, taskId: blocked.id } });
    const rest = (await collect(sub)) as any[];
    expect(rest.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    await expect(c.getTask({ id: `demo:${randomUUID()}` })).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});
