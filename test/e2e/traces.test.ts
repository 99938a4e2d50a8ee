/**
 * OpenTelemetry across processes (spec §10): a client's W3C trace context flows through the
 * gateway, NATS and the bridge into the task's own span; a hostile traceparent is ignored.
 * Spans go by OTLP/HTTP to a receiver written in the test, configured only by OTEL_* variables.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI, eventually, freePort, runTs, startMesh, startOtlpReceiver, type Mesh, type OtlpReceiver } from '@shrooms/testing';

let mesh: Mesh;
let otlp: OtlpReceiver;
beforeAll(async () => {
  otlp = await startOtlpReceiver();
  mesh = await startMesh({
    guard: true,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
    sessions: [{ name: 'demo' }],
  });
});
afterAll(async () => {
  await mesh?.stop();
  await otlp?.close();
});

async function send(id: string, headers: Record<string, string>, gatewayUrl = mesh.gatewayUrl) {
  const res = await fetch(`${gatewayUrl}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: id, role: 'ROLE_USER', parts: [{ text: 'traced' }] } },
    }),
  });
  return ((await res.json()) as any).result.task;
}

it("continues the client's trace through gateway, guard, delivery and the task's life", async () => {
  const traceId = randomBytes(16).toString('hex');
  const clientSpan = randomBytes(8).toString('hex');
  const task = await send('traced-1', { traceparent: `00-${traceId}-${clientSpan}-01` });
  expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  const spans = await eventually(() => {
    const s = otlp.spans.filter((x) => x.traceId === traceId);
    const names = ['task', 'admit', 'deliver', 'a2a SendMessage'];
    return names.every((n) => s.some((x) => x.name.startsWith(n))) ? s : undefined;
  }, 30_000);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const request = spans.find((s) => s.name === 'a2a SendMessage')!;
  expect(request.service).toBe('shrooms-gateway');
  expect(request.parentSpanId).toBe(clientSpan);
  const taskSpan = spans.find((s) => s.name === 'task')!;
  expect(taskSpan.service).toBe('shrooms-bridge');
  expect(taskSpan.attributes['shrooms.task_id']).toBe('demo:traced-1');
  expect(taskSpan.attributes['shrooms.depth']).toBe(0);
  expect(taskSpan.events).toContain('TASK_STATE_COMPLETED');
  // The task span descends from the request span, through the bridge's delivery endpoint.
  const ancestors: string[] = [];
  for (let s = byId.get(taskSpan.parentSpanId ?? ''); s; s = byId.get(s.parentSpanId ?? '')) ancestors.push(s.name);
  expect(ancestors).toContain('a2a SendMessage');
  expect(ancestors.some((n) => n.startsWith('deliver'))).toBe(true);
  // The guard's decision is in the same trace, under the request.
  const admit = spans.find((s) => s.name.startsWith('admit'))!;
  expect(admit.service).toBe('shrooms-guard');
  // Timings nest: a child starts no earlier than its parent.
  for (const s of spans) {
    const parent = byId.get(s.parentSpanId ?? '');
    if (parent) expect(s.startNs >= parent.startNs).toBe(true);
  }
});

it('shows the decision in the trace when the gateway admits in its own process', async () => {
  // A second gateway of the machine, admitting itself (GATEWAY_GUARD=local, up's default).
  const port = await freePort();
  const local = runTs(CLI, ['gateway'], { ...mesh.env, GATEWAY_PORT: String(port), GATEWAY_GUARD: 'local' });
  mesh.services.push(local);
  await local.waitFor(/gateway listening/, 60_000);
  const traceId = randomBytes(16).toString('hex');
  const task = await send(
    'traced-local',
    { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    `http://127.0.0.1:${port}`,
  );
  expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  const spans = await eventually(() => {
    const s = otlp.spans.filter((x) => x.traceId === traceId);
    return s.some((x) => x.name === 'task') && s.some((x) => x.name.startsWith('admit')) ? s : undefined;
  }, 30_000);
  const admit = spans.find((s) => s.name.startsWith('admit'))!;
  expect(admit.service).toBe('shrooms-gateway');
  expect(admit.attributes['shrooms.admitted']).toBe(true);
  expect(spans.find((s) => s.spanId === admit.parentSpanId)?.name).toBe('a2a SendMessage');
});

it('ignores a malformed or hostile traceparent and never joins another trace by accident', async () => {
  const hostile = [
    '00-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz-zzzzzzzzzzzzzzzz-01',
    `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`,
    `00-${'a'.repeat(32)}-${'0'.repeat(16)}-01`,
    'x'.repeat(5000),
    `ff-${'b'.repeat(32)}-${'c'.repeat(16)}-01`,
    '00-abc',
  ];
  for (const [i, tp] of hostile.entries()) {
    const task = await send(`hostile-${i}`, { traceparent: tp, tracestate: 'k=v,'.repeat(200) });
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  }
  const spans = await eventually(() => {
    const s = otlp.spans.filter((x) => x.name === 'a2a SendMessage' && !x.parentSpanId);
    return s.length >= hostile.length ? s : undefined;
  }, 30_000);
  for (const s of spans) {
    expect(s.traceId).not.toBe('0'.repeat(32));
    expect(s.traceId).not.toBe('a'.repeat(32));
    expect(s.traceId).not.toBe('b'.repeat(32));
  }
});
