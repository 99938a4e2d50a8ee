/**
 * `@a2a-js/sdk` 1.3 as its README uses it: `new ClientFactory()` and `createFromUrl()` on the
 * endpoint `up` printed — as printed, and without its trailing slash — over both transports, each
 * client method called with its defaults (plain objects, fields left unset as a JavaScript caller
 * leaves them).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { ListTasksRequest, Role, type Task, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, type Client } from '@a2a-js/sdk/client';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';

const endpoint = inject('endpoint');
const machine = inject('machine');

/** What a JavaScript caller writes: only the fields it means. */
const message = (text: string, extra: Record<string, unknown> = {}) =>
  ({
    message: { messageId: `sdk1-${randomUUID()}`, role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }], ...extra },
  }) as any;

const textOf = (t: Task) => t.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === 'text' ? p.content.value : ''));

async function collect(it: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const e of it) out.push(e);
  return out;
}

it('prints an endpoint that ends in a slash, so the SDK resolver keeps the session', () => {
  expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/a2a\/demo\/$/);
});

describe.each([
  ['JSONRPC', 'as printed', endpoint],
  ['HTTP+JSON', 'as printed', endpoint],
  ['JSONRPC', 'without the trailing slash', endpoint.replace(/\/$/, '')],
  ['HTTP+JSON', 'without the trailing slash', endpoint.replace(/\/$/, '')],
] as const)('over %s, the endpoint %s', (binding, _how, url) => {
  let client: Client;
  const connect = async () =>
    (client ??= await new ClientFactory(
      binding === 'JSONRPC' ? undefined : ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }),
    ).createFromUrl(url));

  it('finds a card that leads to the demo session', async () => {
    const c = await connect();
    const card = await c.getAgentCard();
    expect(card.supportedInterfaces[0]!.url).toBe(endpoint.replace(/\/$/, ''));
    expect(card.name).toMatch(new RegExp(`^${machine}(/demo)?$`));
  });

  it('sends a message and gets the finished task, then reads it back', async () => {
    const c = await connect();
    const res = await c.sendMessage(message('hello sdk'));
    const task = res as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task)).toEqual(['hello sdk']);
    const again = await c.getTask({ id: task.id } as any);
    expect(again.id).toBe(task.id);
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('streams a message: the task first, then updates up to COMPLETED', async () => {
    const c = await connect();
    const events = await collect(c.sendMessageStream(message('streamed')));
    expect(events[0]!.payload?.$case).toBe('task');
    const last = events.at(-1)!;
    const state =
      last.payload?.$case === 'statusUpdate'
        ? last.payload.value.status?.state
        : last.payload?.$case === 'task'
          ? last.payload.value.status?.state
          : undefined;
    expect(state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('lists tasks with only pageSize set (status left unset), as a JavaScript caller writes it', async () => {
    const c = await connect();
    await c.sendMessage(message('for the list'));
    const page = await c.listTasks({ pageSize: 2 } as ListTasksRequest);
    expect(page.tasks.length).toBe(2);
    expect(page.nextPageToken).not.toBe('');
    const next = await c.listTasks(ListTasksRequest.fromJSON({ pageSize: 2, pageToken: page.nextPageToken }));
    expect(next.tasks.map((t) => t.id)).not.toContain(page.tasks[0]!.id);
  });

  it('cancels an open task', async () => {
    const c = await connect();
    // `quiet:` ends the echo's turn without finishing the task: it stays open, as a real worker's can.
    const open = (await c.sendMessage({ ...message('quiet: not yet'), configuration: { returnImmediately: true } })) as Task;
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(open.status?.state);
    const canceled = await c.cancelTask({ id: open.id } as any);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('resubscribes to a blocked task and sees the answer complete it', async () => {
    const c = await connect();
    const blocked = (await c.sendMessage(message('blocked: which branch?'))) as Task;
    expect(blocked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const sub = c.resubscribeTask({ id: blocked.id } as any);
    const first = await sub.next();
    expect(first.value?.payload?.$case).toBe('task');
    await c.sendMessage(message('main', { taskId: blocked.id }));
    const rest: StreamResponse[] = [];
    for await (const e of sub) rest.push(e);
    const last = rest.at(-1)!;
    expect(last.payload?.$case === 'statusUpdate' && last.payload.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('gets typed errors: an unknown task, and push the card says is not offered', async () => {
    const c = await connect();
    await expect(c.getTask({ id: `demo:${randomUUID()}` } as any)).rejects.toBeInstanceOf(TaskNotFoundError);
    // The client refuses this one itself (synchronously), from the card's capabilities.
    const push = async () => c.createTaskPushNotificationConfig({ taskId: 'demo:x', url: 'http://127.0.0.1:9/hook' } as any);
    await expect(push()).rejects.toMatchObject({ reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED' });
  });
});
