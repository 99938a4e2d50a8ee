/**
 * One request of each kind against each arm, checked: a figure counts only answers that did what
 * was asked (a blocking send came back COMPLETED, a page has its tasks, a stream ended COMPLETED).
 */
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { benchLogin } from '../arms/login.js';
import { floorSubjects } from '../arms/floor-subjects.js';
import { shelfTaskId } from '../arms/shelf.js';
import { RpcClient } from './http.js';
import type { HttpTarget, NatsTarget, Op, Target } from './jobs.js';

export interface Outcome {
  ok: boolean;
  error?: string;
  /** Set by streams: time to the first event, ms from the start of the call. */
  firstMs?: number;
  /** For send_nb: the accepted task's id (to wait for it later). */
  taskId?: string;
  requestBytes: number;
  responseBytes: number;
}

export type Call = (t0: number) => Promise<Outcome>;

let seq = 0;
const natsConns = new Map<string, Promise<NatsConnection>>();
const natsConn = (url: string) => {
  let p = natsConns.get(url);
  if (!p) natsConns.set(url, (p = connect({ servers: url, name: 'bench loadgen', ...benchLogin() })));
  return p;
};

export async function closeAll(): Promise<void> {
  for (const p of natsConns.values()) await (await p).drain().catch(() => {});
  natsConns.clear();
}

export interface OpOptions {
  shelf?: number;
  pageSize?: number;
  sockets: number;
}

export async function makeCall(target: Target, op: Op, opts: OpOptions): Promise<{ call: Call; close(): void }> {
  if (target.kind === 'nats') return { call: await natsCall(target, op), close: () => {} };
  if (target.urls && target.urls.length > 1) {
    // One keep-alive pool per endpoint (same host and port: sockets would be shared anyway).
    const calls = target.urls.map((url) => {
      const client = new RpcClient(url, opts.sockets);
      return { client, call: httpCall(client, { ...target, url }, op, opts) };
    });
    let next = 0;
    return { call: (t0) => calls[next++ % calls.length]!.call(t0), close: () => calls.forEach((c) => c.client.close()) };
  }
  const client = new RpcClient(target.url, opts.sockets);
  return { call: httpCall(client, target, op, opts), close: () => client.close() };
}

function httpCall(client: RpcClient, target: HttpTarget, op: Op, opts: OpOptions): Call {
  const tenant = target.tenant ? { tenant: target.tenant } : {};
  const message = () => ({ messageId: `lg-${process.pid}-${++seq}-${randomUUID()}`, role: 'ROLE_USER', parts: [{ text: `hello ${seq}` }] });
  const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: seq, method, params });
  switch (op) {
    case 'send':
    case 'send_nb':
      return async () => {
        const body = rpc('SendMessage', {
          ...tenant,
          message: message(),
          ...(op === 'send_nb' ? { configuration: { returnImmediately: true } } : {}),
        });
        const r = await client.call(body);
        const task = parse(r.body)?.result?.task;
        const state = task?.status?.state;
        const ok = op === 'send' ? state === 'TASK_STATE_COMPLETED' : typeof task?.id === 'string';
        return {
          ok,
          ...(ok ? {} : { error: r.body.slice(0, 300) }),
          taskId: task?.id,
          requestBytes: body.length,
          responseBytes: r.body.length,
        };
      };
    case 'stream':
      return async (t0) => {
        const body = rpc('SendStreamingMessage', { ...tenant, message: message() });
        const r = await client.stream(body, t0);
        const last = parse(r.events[r.events.length - 1] ?? '');
        const state = last?.result?.statusUpdate?.status?.state ?? last?.result?.task?.status?.state;
        const ok = r.status === 200 && r.firstMs !== null && state === 'TASK_STATE_COMPLETED';
        return {
          ok,
          ...(ok ? {} : { error: `${r.status} ${r.events.join(' | ').slice(0, 300)}` }),
          firstMs: r.firstMs ?? undefined,
          requestBytes: body.length,
          responseBytes: r.bytes,
        };
      };
    case 'get':
      return async () => {
        const i = Math.floor(Math.random() * (opts.shelf ?? 1));
        const body = rpc('GetTask', { ...tenant, id: shelfTaskId(i) });
        const r = await client.call(body);
        const ok = parse(r.body)?.result?.id === shelfTaskId(i);
        return { ok, ...(ok ? {} : { error: r.body.slice(0, 300) }), requestBytes: body.length, responseBytes: r.body.length };
      };
    case 'list':
      return async () => {
        const pageSize = opts.pageSize ?? 50;
        const body = rpc('ListTasks', { ...tenant, pageSize });
        const r = await client.call(body);
        const tasks = parse(r.body)?.result?.tasks;
        const ok = Array.isArray(tasks) && tasks.length === Math.min(pageSize, opts.shelf ?? pageSize);
        return { ok, ...(ok ? {} : { error: r.body.slice(0, 300) }), requestBytes: body.length, responseBytes: r.body.length };
      };
  }
}

async function natsCall(target: NatsTarget, op: Op): Promise<Call> {
  const nc = await natsConn(target.url);
  const payload = new Uint8Array(target.requestBytes).fill(121);
  const subject = op === 'send_nb' ? floorSubjects.hop1Accept(target.replyBytes) : floorSubjects.hop1Request(target.replyBytes);
  return async (t0) => {
    const r = await nc.request(subject, payload, { timeout: 10_000 });
    const ok = r.data.length === target.replyBytes;
    return {
      ok,
      ...(ok ? {} : { error: `floor reply of ${r.data.length} bytes` }),
      ...(op === 'stream' ? { firstMs: performance.now() - t0 } : {}),
      requestBytes: payload.length,
      responseBytes: r.data.length,
    };
  };
}

/** How many deferred floor messages hop2 has counted. */
export async function floorCount(url: string): Promise<number> {
  const nc = await natsConn(url);
  return Number(new TextDecoder().decode((await nc.request(floorSubjects.hop2Count(), '', { timeout: 5000 })).data));
}

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
