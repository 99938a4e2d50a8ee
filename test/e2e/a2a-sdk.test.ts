/**
 * The A2A surface through the real `@a2a-js/sdk` client, over both bindings, against a gateway and
 * bridges running as separate processes over a real nats-server.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  Task as SdkTask,
  TaskState,
} from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { startMesh, type Mesh } from '@shrooms/testing';

let mesh: Mesh;

beforeAll(async () => {
  mesh = await startMesh({ sessions: [{ name: 'demo' }, { name: 'slow', env: { ECHO_DELAY_MS: '600000' } }] });
});
afterAll(async () => {
  await mesh?.stop();
});

function factory(binding: 'JSONRPC' | 'HTTP+JSON'): ClientFactory {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
      preferredTransports: [binding],
    }),
  );
}

const send = (text: string, extra: Record<string, unknown> = {}, configuration?: Record<string, unknown>) =>
  SendMessageRequest.fromJSON({
    message: { messageId: `m-${randomUUID()}`, role: 'ROLE_USER', parts: [{ text }], ...extra },
    ...(configuration ? { configuration } : {}),
  });

const json = (t: SdkTask) => SdkTask.toJSON(t) as any;

describe.each(['JSONRPC', 'HTTP+JSON'] as const)('over %s', (binding) => {
  let demo: Client;
  let slow: Client;
  beforeAll(async () => {
    demo = await factory(binding).createFromUrl(`${mesh.gatewayUrl}/a2a/demo/`);
    slow = await factory(binding).createFromUrl(`${mesh.gatewayUrl}/a2a/slow/`);
  });

  it('discovers the session card and completes a blocking SendMessage with the echo', async () => {
    const card = await demo.getAgentCard();
    expect(card.name).toBe(`${mesh.machine}/demo`);
    expect(card.capabilities?.streaming).toBe(true);
    const res = await demo.sendMessage(send('hello'));
    const task = json(res as SdkTask);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.id).toMatch(/^demo:m-/);
    expect(task.artifacts[0].parts[0].text).toBe('hello');
    const again = json(await demo.getTask(GetTaskRequest.fromJSON({ id: task.id })));
    expect(again).toEqual(task);
  });

  it('returns the existing task for a resend of the same message id', async () => {
    const req = send('once');
    const a = json((await demo.sendMessage(req)) as SdkTask);
    const b = json((await demo.sendMessage(req)) as SdkTask);
    expect(b.id).toBe(a.id);
    expect(b.status).toEqual(a.status);
  });

  it('returns at once with returnImmediately, then cancels the task and the worker', async () => {
    const t = json((await slow.sendMessage(send('take your time', {}, { returnImmediately: true }))) as SdkTask);
    expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(t.status.state);
    const canceled = json(await slow.cancelTask(CancelTaskRequest.fromJSON({ id: t.id })));
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
    const twice = json(await slow.cancelTask(CancelTaskRequest.fromJSON({ id: t.id })));
    expect(twice.status.state).toBe('TASK_STATE_CANCELED');
    // The session is free again: the next task starts working.
    const next = json((await slow.sendMessage(send('next', {}, { returnImmediately: true }))) as SdkTask);
    await expect
      .poll(async () => json(await slow.getTask(GetTaskRequest.fromJSON({ id: next.id }))).status.state, { timeout: 20_000 })
      .toBe('TASK_STATE_WORKING');
    await slow.cancelTask(CancelTaskRequest.fromJSON({ id: next.id }));
  });

  it('keeps every field of a file, link and data part as sent: filename, mediaType, metadata', async () => {
    const parts = [
      { text: 'look at these' },
      { raw: Buffer.from('hello file\n').toString('base64'), filename: 'notes.txt', mediaType: 'text/plain', metadata: { from: 'sdk' } },
      { url: 'https://example.invalid/spec.pdf', filename: 'spec.pdf', mediaType: 'application/pdf', metadata: { pages: 3 } },
      { data: { branch: 'main' }, mediaType: 'application/json', metadata: { kind: 'ref' } },
    ];
    const sent = SendMessageRequest.fromJSON({ message: { messageId: `m-${randomUUID()}`, role: 'ROLE_USER', parts } });
    const t = json((await demo.sendMessage(sent)) as SdkTask);
    expect(t.history[0].parts).toEqual(parts);
    const read = json(await demo.getTask(GetTaskRequest.fromJSON({ id: t.id })));
    expect(read.history[0].parts).toEqual(parts);
  });

  it('refuses to cancel a finished task with TaskNotCancelable', async () => {
    const t = json((await demo.sendMessage(send('done already'))) as SdkTask);
    await expect(demo.cancelTask(CancelTaskRequest.fromJSON({ id: t.id }))).rejects.toThrow(/already TASK_STATE_COMPLETED|not cancel/i);
  });

  it('lists tasks newest first, one page at a time', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(json((await demo.sendMessage(send(`page ${i}`))) as SdkTask).id);
    const first = ListTasksRequest.toJSON(ListTasksRequest.fromJSON({ pageSize: 2 }));
    const p1 = (await demo.listTasks(ListTasksRequest.fromJSON(first))) as any;
    expect(p1.tasks.map((t: SdkTask) => t.id)).toEqual([ids[2], ids[1]]);
    expect(p1.nextPageToken).not.toBe('');
    expect(p1.totalSize).toBeGreaterThanOrEqual(3);
    const p2 = (await demo.listTasks(ListTasksRequest.fromJSON({ pageSize: 2, pageToken: p1.nextPageToken }))) as any;
    expect(p2.tasks[0].id).toBe(ids[0]);
    expect(p1.tasks[0].artifacts ?? []).toEqual([]);
  });

  it('streams a task from submitted to completed with SendStreamingMessage', async () => {
    const events: any[] = [];
    for await (const e of demo.sendMessageStream(send('stream me'))) events.push(e);
    expect(events[0].payload?.$case ?? Object.keys(events[0])[0]).toMatch(/task/);
    const last = events[events.length - 1];
    const status = last.payload?.value?.status ?? last.statusUpdate?.status;
    expect(status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('takes a blocked task through an answer to completion', async () => {
    const t = json((await demo.sendMessage(send('blocked: which branch?'))) as SdkTask);
    expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(t.status.message.parts[0].text).toBe('which branch?');
    const done = json((await demo.sendMessage(send('main, please', { taskId: t.id }))) as SdkTask);
    expect(done.id).toBe(t.id);
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts[0].parts[0].text).toBe('main, please');
  });

  it('resubscribes to a working task and sees it end', async () => {
    const t = json((await slow.sendMessage(send('watch me', {}, { returnImmediately: true }))) as SdkTask);
    const events: any[] = [];
    const reading = (async () => {
      for await (const e of slow.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: t.id }))) {
        events.push(e);
        if (events.length === 1) await slow.cancelTask(CancelTaskRequest.fromJSON({ id: t.id }));
      }
    })();
    await reading;
    const last = events[events.length - 1];
    const status = last.payload?.value?.status ?? last.statusUpdate?.status;
    expect(status.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});
