/**
 * The bounded limits at their edges, under concurrency (spec §11): the queue length and open
 * tasks per session (exact counts even when the asks race), the body size, the text size, parts
 * and metadata per message, the SSE stream cap and a device's blocking waits — exactly at the limit accepted, one past it
 * refused with LIMIT_EXCEEDED (or QUEUE_FULL) naming the limit; nothing stored for a refusal,
 * nothing crashes, and the gateway still serves afterwards.
 *
 * Over 300 lines: one mesh whose sessions and gateway settings are set at each limit's edge, and
 * one chaos report of them all; every case below needs that same set-up.
 */
import http from 'node:http';
import { connect } from 'node:net';
import { DEFAULT_LIMITS, textOf } from '@shrooms/protocol';
import { buildRawRequest, eventually, reportChaos, rpc, startMesh, type Mesh } from '@shrooms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const QUEUE = 10;
const OPEN = 5;
const SSE_CAP = 20;
const WAITS = 6; // more than the blocking sends any other test here makes at once (5)
const BODY = DEFAULT_LIMITS.bodyBytes;
const TEXT = DEFAULT_LIMITS.textBytes;

let mesh: Mesh;
const figures: Record<string, unknown> = {};
let accepted = 0;
let refusals = 0;

beforeAll(async () => {
  const slow = { ECHO_DELAY_MS: '3600000' };
  mesh = await startMesh({
    sessions: [
      { name: 'queue', env: { ...slow, LIMIT_QUEUE_LENGTH: String(QUEUE), LIMIT_OPEN_TASKS: '1000' } },
      { name: 'open', env: { ...slow, LIMIT_QUEUE_LENGTH: '1000', LIMIT_OPEN_TASKS: String(OPEN) } },
      { name: 'fast' },
      { name: 'waits', env: { ...slow, LIMIT_QUEUE_LENGTH: '1000', LIMIT_OPEN_TASKS: '1000' } },
    ],
    env: { LIMIT_SSE_STREAMS: String(SSE_CAP), GATEWAY_SSE_HEARTBEAT_MS: '200', LIMIT_BLOCKING_WAITS_PER_DEVICE: String(WAITS) },
  });
  for (const s of ['queue', 'open', 'fast', 'waits'])
    await eventually(async () => (await rpc(`${mesh.gatewayUrl}/a2a/${s}`, 'ListTasks', {})).result, 30_000, 100);
}, 120_000);

afterAll(async () => {
  const alive = mesh.gateway.child.exitCode === null && [...mesh.bridges.values()].every((b) => b.child.exitCode === null);
  const log = mesh.gateway.output();
  figures.internalErrorsLogged = (log.match(/"msg":"(internal error|unhandled error)"/g) ?? []).length;
  figures.listenerWarnings = (log.match(/MaxListenersExceededWarning/g) ?? []).length;
  await mesh?.stop();
  await reportChaos('limits at their edges', [
    {
      scenario: 'limits at their edges, concurrent',
      load: 'bursts of 10–40 concurrent requests per limit',
      faults: 'queue, open tasks, body, text, parts, metadata, SSE cap, blocking waits per device',
      acknowledged: accepted,
      lost: 0,
      stuck: 0,
      recoveryMs: null,
      notes: `${refusals} refusals, each a clear error naming its limit; processes alive: ${alive}`,
      details: figures,
    },
  ]);
});

const msg = (id: string, text = 'x', extra: Record<string, unknown> = {}) => ({
  message: { messageId: id, role: 'ROLE_USER', parts: [{ text }], ...extra },
  configuration: { returnImmediately: true },
});
const url = (s: string) => `${mesh.gatewayUrl}/a2a/${s}`;

/** Counts answers by outcome: `ok` or the error's code and `limit` metadata. */
function tally(
  answers: { result?: unknown; error?: { code: number; data?: { metadata?: Record<string, string> }[] } }[],
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const k = a.result ? 'ok' : `${a.error?.code} ${a.error?.data?.[0]?.metadata?.limit ?? ''}`.trim();
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** A blocking SendMessage to the hour-long worker `waits`: its answer (undefined once aborted), and the abort. */
function blockingSend(id: string) {
  const abort = new AbortController();
  const answer = fetch(url('waits'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: msg(id).message } }),
    signal: abort.signal,
  }).then(
    (r) => r.json() as Promise<{ error?: { message: string; data?: { metadata?: Record<string, string> }[] } }>,
    () => undefined,
  );
  return { id: `waits:${id}`, abort, answer };
}

describe('limits at their edges under concurrency', () => {
  it('takes exactly as many tasks as the queue holds and refuses the rest with QUEUE_FULL', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => rpc(url('queue'), 'SendMessage', msg(`q-${i}`))));
    const t = tally(answers);
    figures.queueLength = t;
    const accepted_ = t.ok ?? 0;
    // One task is being worked on (not queued) once the first is started; the queue holds QUEUE.
    expect(accepted_).toBeGreaterThanOrEqual(QUEUE);
    expect(accepted_).toBeLessThanOrEqual(QUEUE + 1);
    expect(t[`-32063 queueLength`]).toBe(40 - accepted_);
    const list = await rpc(url('queue'), 'ListTasks', { pageSize: 100 });
    expect(list.result.totalSize).toBe(accepted_);
    expect(
      list.result.tasks.filter((x: { status: { state: string } }) => x.status.state === 'TASK_STATE_SUBMITTED').length,
    ).toBeLessThanOrEqual(QUEUE);
    refusals += 40 - accepted_;
    accepted += accepted_;
  });

  it('holds exactly the open-task limit of a session and refuses the rest with LIMIT_EXCEEDED', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => rpc(url('open'), 'SendMessage', msg(`o-${i}`))));
    const t = tally(answers);
    figures.openTasksPerSession = t;
    expect(t).toEqual({ ok: OPEN, '-32057 openTasksPerSession': 30 - OPEN });
    expect((await rpc(url('open'), 'ListTasks', { pageSize: 100 })).result.totalSize).toBe(OPEN);
    refusals += 30 - OPEN;
    accepted += OPEN;
  });

  it('reads a body of exactly the limit and refuses one byte more, in both bindings', async () => {
    const sized = (n: number) => {
      const base = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'fast:missing', pad: '' } });
      return base.replace('"pad":""', `"pad":"${'p'.repeat(n - Buffer.byteLength(base))}"`);
    };
    expect(Buffer.byteLength(sized(BODY))).toBe(BODY);
    const post = (path: string, body: string) =>
      fetch(`${mesh.gatewayUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body,
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const at = await Promise.all(Array.from({ length: 10 }, () => post('/a2a/fast', sized(BODY))));
    const over = await Promise.all(Array.from({ length: 10 }, () => post('/a2a/fast', sized(BODY + 1))));
    const restOver = await Promise.all(Array.from({ length: 10 }, () => post('/a2a/fast/message:send', sized(BODY + 1))));
    figures.bodyBytes = {
      atLimit: tally(at.map((a) => a.body)),
      overLimit: tally(over.map((a) => a.body)),
      restOverLimit: restOver.map((r) => r.status),
    };
    expect(at.every((a) => a.status === 200 && a.body.error.code === -32001)).toBe(true);
    expect(over.every((a) => a.status === 200 && a.body.error.code === -32057 && a.body.error.data[0].metadata.limit === 'bodyBytes')).toBe(
      true,
    );
    expect(restOver.every((r) => r.status === 413 && r.body.error.details[0].reason === 'LIMIT_EXCEEDED')).toBe(true);
    refusals += 20;
  });

  it('takes text of exactly the limit (counted in UTF-8 bytes) and refuses one byte more', async () => {
    const atLimit = 'é'.repeat(TEXT / 2);
    expect(Buffer.byteLength(atLimit)).toBe(TEXT);
    const ok = await Promise.all(
      Array.from({ length: 5 }, (_, i) => rpc(url('fast'), 'SendMessage', { ...msg(`t-ok-${i}`, atLimit), configuration: {} })),
    );
    const no = await Promise.all(Array.from({ length: 5 }, (_, i) => rpc(url('fast'), 'SendMessage', msg(`t-no-${i}`, `${atLimit}a`))));
    figures.textBytes = { atLimit: tally(ok), overLimit: tally(no) };
    for (const a of ok) {
      expect(a.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(textOf(a.result.task.artifacts[0])).toBe(atLimit);
    }
    expect(tally(no)).toEqual({ '-32057 textBytes': 5 });
    for (let i = 0; i < 5; i++) expect((await rpc(url('fast'), 'GetTask', { id: `fast:t-no-${i}` })).error.code).toBe(-32001);
    refusals += 5;
    accepted += 5;
  });

  it('takes parts, metadata entries and metadata depth up to their limits and refuses one more', async () => {
    const parts = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `p${i}` }));
    const md = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    const deep = (d: number): unknown => (d <= 1 ? {} : { a: deep(d - 1) });
    const cases = {
      partsAt: msg('pa', 'x', { parts: parts(DEFAULT_LIMITS.partsPerMessage) }),
      partsOver: msg('po', 'x', { parts: parts(DEFAULT_LIMITS.partsPerMessage + 1) }),
      metadataAt: { ...msg('ma'), metadata: md(DEFAULT_LIMITS.metadataEntries) },
      metadataOver: { ...msg('mo'), metadata: md(DEFAULT_LIMITS.metadataEntries + 1) },
      depthAt: { ...msg('da'), metadata: { x: deep(31) } },
      depthOver: { ...msg('do'), metadata: { x: deep(32) } },
    };
    const answers = Object.fromEntries(
      await Promise.all(Object.entries(cases).map(async ([k, p]) => [k, await rpc(url('fast'), 'SendMessage', p)] as const)),
    );
    figures.perMessage = Object.fromEntries(Object.entries(answers).map(([k, a]) => [k, tally([a])]));
    expect(answers.partsAt.result).toBeDefined();
    expect(answers.metadataAt.result).toBeDefined();
    expect(answers.depthAt.result).toBeDefined();
    expect(tally([answers.partsOver])).toEqual({ '-32057 partsPerMessage': 1 });
    expect(tally([answers.metadataOver])).toEqual({ '-32057 metadataEntries': 1 });
    expect(tally([answers.depthOver])).toEqual({ '-32057 metadataDepth': 1 });
    refusals += 3;
    accepted += 3;
  });

  it('opens exactly as many streams as the cap allows and refuses the rest until they close', async () => {
    const working = (await rpc(url('queue'), 'ListTasks', { status: 'TASK_STATE_WORKING' })).result.tasks[0].id as string;
    const open = () =>
      new Promise<{ ok: boolean; reason?: string; close: () => void }>((resolve) => {
        const sock = connect({ port: mesh.gatewayPort, host: '127.0.0.1' });
        let buf = '';
        sock.on('data', (d: Buffer) => {
          buf += d.toString();
          if (buf.includes('data: ')) resolve({ ok: true, close: () => sock.destroy() });
          const r = buf.match(/"reason":"([A-Z_]+)"/);
          if (r) resolve({ ok: false, reason: r[1], close: () => sock.destroy() });
        });
        sock.on('error', () => resolve({ ok: false, reason: 'socket', close: () => {} }));
        sock.write(
          buildRawRequest({
            method: 'POST',
            path: '/a2a/queue',
            headers: [['content-type', 'application/json']],
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: working } }),
          }),
        );
      });
    const first = await Promise.all(Array.from({ length: SSE_CAP + 10 }, open));
    const streams = first.filter((s) => s.ok).length;
    const refused = first.filter((s) => s.reason === 'LIMIT_EXCEEDED').length;
    for (const s of first) s.close();
    // Once they are gone, the cap is free again: a full set opens.
    const again = await eventually(
      async () => {
        const set = await Promise.all(Array.from({ length: SSE_CAP }, open));
        for (const s of set) s.close();
        return set.every((s) => s.ok) ? set : undefined;
      },
      20_000,
      200,
    );
    figures.sseStreams = { cap: SSE_CAP, asked: SSE_CAP + 10, accepted: streams, refused, againAfterClose: again.length };
    expect(streams).toBe(SSE_CAP);
    expect(refused).toBe(10);
    refusals += refused;
  });

  it('leaves nothing behind after many requests on one keep-alive connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < 50; i++) {
      await new Promise<void>((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'GetTask', params: { id: 'fast:missing' } });
        const r = http.request(
          {
            host: '127.0.0.1',
            port: mesh.gatewayPort,
            path: '/a2a/fast',
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve());
          },
        );
        r.on('error', reject);
        r.end(body);
      });
    }
    agent.destroy();
    expect(mesh.gateway.output()).not.toMatch(/MaxListenersExceededWarning/);
  });

  it('still serves after all of it: nothing crashed', async () => {
    const done = await rpc(url('fast'), 'SendMessage', {
      message: { messageId: 'after-limits', role: 'ROLE_USER', parts: [{ text: 'still here' }] },
    });
    expect(done.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(mesh.gateway.child.exitCode).toBe(null);
    for (const b of mesh.bridges.values()) expect(b.child.exitCode).toBe(null);
    expect(mesh.gateway.output()).not.toMatch(/"msg":"(internal error|unhandled error)"/);
  });
  it("holds a device's share of blocking waits and refuses the rest before any task is made", async () => {
    // Blocking sends to a worker that takes an hour: each holds its request open.
    const sends = Array.from({ length: WAITS + 2 }, (_, i) => blockingSend(`w-${i}`));
    try {
      // The two past the share come back at once, refused; the others wait on.
      const refused = await eventually(async () => {
        const done = await Promise.all(sends.map((s) => Promise.race([s.answer, new Promise((r) => setTimeout(r, 50, null))])));
        const out = sends.filter((_, i) => done[i]);
        return out.length === 2 ? out : undefined;
      });
      for (const s of refused) {
        const a = await s.answer;
        expect(a?.error?.data?.[0]?.metadata).toMatchObject({ limit: 'blockingWaitsPerDevice', max: String(WAITS) });
        expect(a?.error?.message).toContain(`holds ${WAITS} blocking SendMessage waits open on this gateway already`);
        expect((await rpc(url('waits'), 'GetTask', { id: s.id })).error?.code).toBe(-32001);
      }
      // The waits it holds are tasks like any other.
      for (const s of sends.filter((x) => !refused.includes(x)))
        await eventually(async () => (await rpc(url('waits'), 'GetTask', { id: s.id })).result);
    } finally {
      for (const s of sends) s.abort.abort();
    }
    // Its waits ended (the client went away), the device has its share again: a send, tried until
    // it is not refused (the gateway learns of each client gone on its own), makes its task.
    let again: ReturnType<typeof blockingSend> | undefined;
    try {
      await eventually(async () => {
        again ??= blockingSend('w-again');
        if (await Promise.race([again.answer, null])) again = undefined;
        return again && (await rpc(url('waits'), 'GetTask', { id: 'waits:w-again' })).result;
      });
    } finally {
      again?.abort.abort();
    }
    figures.blockingWaitsPerDevice = { share: WAITS, asked: WAITS + 2, refused: 2 };
    refusals += 2;
  });
});
