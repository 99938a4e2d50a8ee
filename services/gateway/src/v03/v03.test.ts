// The two v0.3 bindings convert parts and tasks once (v03.ts); REST only renames. Pinned here on
// the shapes each sends, so a change to the shared conversion shows in both.
import { describe, expect, it } from 'vitest';
import type { StreamResponse, Task } from '@shrooms/protocol';
import { paramsFromV03, resultToV03, streamEventToV03, withClosingStatus } from './jsonrpc.js';
import { resultToV03Rest, sendParamsFromV03Rest, streamEventToV03Rest } from './rest.js';

const task: Task = {
  id: 'demo:m-1',
  contextId: 'c-1',
  status: { state: 'TASK_STATE_COMPLETED', message: { messageId: 's', role: 'ROLE_AGENT', parts: [{ text: 'done' }] } },
  artifacts: [
    {
      artifactId: 'a-1',
      parts: [
        { text: 'done' },
        { raw: 'aGk=', filename: 'hi.txt', mediaType: 'text/plain' },
        { url: 'https://x.example/y' },
        { data: [1, 2] },
      ],
    },
  ],
};

describe('v0.3 parts, both bindings', () => {
  it('read a file, a link and data the same way in', () => {
    const rpc = paramsFromV03('message/send', {
      message: {
        messageId: 'm',
        role: 'user',
        parts: [
          { kind: 'file', file: { bytes: 'aGk=', name: 'hi.txt', mimeType: 'text/plain' } },
          { kind: 'file', file: { uri: 'https://x.example/y' } },
          { kind: 'data', data: { a: 1 } },
          { kind: 'text', text: 'hi', metadata: { k: 'v' } },
        ],
      },
    }) as any;
    const rest = sendParamsFromV03Rest({
      message: {
        messageId: 'm',
        role: 'ROLE_USER',
        content: [
          { file: { fileWithBytes: 'aGk=', name: 'hi.txt', mimeType: 'text/plain' } },
          { file: { fileWithUri: 'https://x.example/y' } },
          { data: { data: { a: 1 } } },
          { text: 'hi', metadata: { k: 'v' } },
        ],
      },
    }) as any;
    const parts = [
      { raw: 'aGk=', filename: 'hi.txt', mediaType: 'text/plain' },
      { url: 'https://x.example/y' },
      { data: { a: 1 } },
      { text: 'hi', metadata: { k: 'v' } },
    ];
    expect(rpc.message.parts).toEqual(parts);
    expect(rest.message.parts).toEqual(parts);
  });

  it('give a file part back with every field it came in with, over REST as over JSON-RPC', () => {
    const file = { bytes: 'aGk=', name: 'hi.txt', mimeType: 'text/plain' };
    const link = { uri: 'https://x.example/spec.pdf', name: 'spec.pdf', mimeType: 'application/pdf' };
    const metadata = { from: 'laptop' };
    const rpcIn = paramsFromV03('message/send', {
      message: {
        messageId: 'm',
        role: 'user',
        parts: [
          { kind: 'file', file, metadata },
          { kind: 'file', file: link },
        ],
      },
    }) as any;
    const restIn = sendParamsFromV03Rest({
      message: {
        messageId: 'm',
        role: 'ROLE_USER',
        content: [
          { file: { fileWithBytes: file.bytes, name: file.name, mimeType: file.mimeType }, metadata },
          { file: { fileWithUri: link.uri, name: link.name, mimeType: link.mimeType } },
        ],
      },
    }) as any;
    expect(restIn.message.parts).toEqual(rpcIn.message.parts);
    const asked: Task = { id: 'demo:m', contextId: 'c', status: { state: 'TASK_STATE_WORKING' }, history: [restIn.message] };
    const rpcOut = (resultToV03('tasks/get', asked) as any).history[0].parts;
    const restOut = (resultToV03Rest('GetTask', asked) as any).history[0].content;
    expect(rpcOut).toEqual([
      { kind: 'file', file, metadata },
      { kind: 'file', file: link },
    ]);
    expect(restOut).toEqual([
      { file: { fileWithBytes: file.bytes, mimeType: file.mimeType, name: file.name }, metadata },
      { file: { fileWithUri: link.uri, mimeType: link.mimeType, name: link.name } },
    ]);
  });

  it('send a completed task with its answer in the artifact alone, in each binding’s names', () => {
    expect(resultToV03('tasks/get', task)).toEqual({
      kind: 'task',
      id: 'demo:m-1',
      contextId: 'c-1',
      status: { state: 'completed' },
      artifacts: [
        {
          artifactId: 'a-1',
          parts: [
            { kind: 'text', text: 'done' },
            { kind: 'file', file: { bytes: 'aGk=', name: 'hi.txt', mimeType: 'text/plain' } },
            { kind: 'file', file: { uri: 'https://x.example/y' } },
            { kind: 'data', data: { value: [1, 2] } },
          ],
        },
      ],
    });
    expect(resultToV03Rest('GetTask', task)).toEqual({
      id: 'demo:m-1',
      contextId: 'c-1',
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [
        {
          artifactId: 'a-1',
          parts: [
            { text: 'done' },
            { file: { fileWithBytes: 'aGk=', mimeType: 'text/plain', name: 'hi.txt' } },
            { file: { fileWithUri: 'https://x.example/y' } },
            { data: { data: { value: [1, 2] } } },
          ],
        },
      ],
    });
  });

  it('mark the status update a stream closes on final, in both', () => {
    const u = { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_CANCELED' as const } } };
    expect(streamEventToV03(u)).toEqual({ kind: 'status-update', taskId: 't', contextId: 'c', status: { state: 'canceled' }, final: true });
    expect(streamEventToV03Rest(u)).toEqual({
      statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_CANCELLED' }, final: true },
    });
  });
});

describe('withClosingStatus: a v0.3 stream ends on a final status update', () => {
  const task = (state: Task['status']['state']): Task => ({ id: 'demo:t', contextId: 'c', status: { state } }) as Task;
  async function* of(...events: StreamResponse[]) {
    yield* events;
  }
  const shaped = async (events: AsyncIterable<StreamResponse>) => {
    const out: Record<string, unknown>[] = [];
    for await (const e of withClosingStatus(events)) out.push(streamEventToV03(e));
    return out;
  };

  it('repeats the status of a stream that closed on its first event, terminal or interrupted', async () => {
    expect(await shaped(of({ task: task('TASK_STATE_COMPLETED') }))).toMatchObject([
      { kind: 'task', status: { state: 'completed' } },
      { kind: 'status-update', taskId: 'demo:t', contextId: 'c', final: true, status: { state: 'completed' } },
    ]);
    expect((await shaped(of({ task: task('TASK_STATE_INPUT_REQUIRED') }))).at(-1)).toMatchObject({
      kind: 'status-update',
      final: true,
      status: { state: 'input-required' },
    });
  });

  it('adds nothing to a stream that already closed on a status update, or that was left while open', async () => {
    const done = { statusUpdate: { taskId: 'demo:t', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } } as StreamResponse;
    expect(await shaped(of({ task: task('TASK_STATE_WORKING') }, done))).toHaveLength(2);
    expect(await shaped(of({ task: task('TASK_STATE_WORKING') }))).toHaveLength(1);
  });
});
