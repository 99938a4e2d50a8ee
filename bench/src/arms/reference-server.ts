/**
 * The reference arm (its own process): what a user would otherwise run — the `@a2a-js/sdk` server
 * with its in-memory task store, an echo executor, and the SDK's own express JSON-RPC adapter.
 * The executor does what our echo harness does: the task, WORKING, an artifact with the text, then
 * COMPLETED with an agent message.
 *
 * Commands (IPC): `preload { tenant, from, count }` saves finished tasks straight into the store,
 * the way the ours arm preloads its ledger.
 */
import type { AddressInfo } from 'node:net';
import { AgentCard, Role, Task, TaskState, type Message, type Part } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, ServerCallContext, type AgentExecutor } from '@a2a-js/sdk/server';
import { UserBuilder, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { serve } from '../child.js';
import { shelfTask } from './shelf.js';
import type { Server as HttpServer } from 'node:http';

// express ships no types of its own and we do not add @types/express for one `express()` call.
const expressModule: string = 'express';
const express = (await import(expressModule)).default as () => {
  use(path: string, handler: unknown): void;
  listen(port: number, host: string, cb: () => void): HttpServer;
};

const PATH = '/a2a/jsonrpc';
const now = () => new Date().toISOString();
const textOf = (m: Message) => m.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

const executor: AgentExecutor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const text = textOf(ctx.userMessage);
    const task: Task = {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
      artifacts: [],
      history: [ctx.userMessage],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
    const parts: Part[] = [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }];
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId: `${taskId}#summary`, name: 'summary', description: '', parts, metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    const reply: Message = {
      messageId: `${taskId}#done`,
      contextId,
      taskId,
      role: Role.ROLE_AGENT,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: reply, timestamp: now() },
        metadata: undefined,
      }),
    );
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
    bus.finished();
  },
};

const app = express();
const server = await new Promise<HttpServer>((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
// Keep idle keep-alive sockets open between phases (as fastify's 72 s default does for ours).
server.keepAliveTimeout = 120_000;
const card = AgentCard.fromJSON({
  name: 'echo',
  description: 'echo agent (benchmark reference)',
  version: '1.0.0',
  supportedInterfaces: [{ url: `${url}${PATH}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'echo', description: 'answers with your text', tags: ['echo'] }],
});
const store = new InMemoryTaskStore();
const handler = new DefaultRequestHandler(card, store, executor);
app.use(PATH, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

serve(
  async function command(c) {
    if (c.type === 'preload') {
      const ctx = new ServerCallContext({ tenant: String(c.tenant) });
      const from = Number(c.from);
      const count = Number(c.count);
      for (let i = from; i < from + count; i++) await store.save(Task.fromJSON(shelfTask(i, true)), ctx);
      return { saved: count };
    }
    throw new Error(`unknown command ${c.type}`);
  },
  { url: `${url}${PATH}` },
);
