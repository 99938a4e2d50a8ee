/**
 * A task's span is begun before its create (which tells a new task from a resend): the create or
 * the watch makes it the task's, a resend's is ended apart. Exported to a real OTLP receiver.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { META } from '@shrooms/protocol';
import { transitions, type Stored } from '@shrooms/ledger';
import { flushTelemetry, initTelemetry } from '@shrooms/runtime';
import { eventually, startOtlpReceiver, type OtlpReceiver } from '@shrooms/testing';
import { TaskSpans } from './spans.js';

let otlp: OtlpReceiver;
let shutdown: () => Promise<void>;
beforeAll(async () => {
  otlp = await startOtlpReceiver();
  // The exporter reads its endpoint from the environment.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
  shutdown = await initTelemetry('spans-test', { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '50' });
});
afterAll(async () => {
  await shutdown?.();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  await otlp?.close();
});

const attrs = (id: string) => ({ taskId: `s:${id}`, session: 'box/s', device: 'laptop' });
/** The task `id` as stored with `traceparent`, asked then `to(…)`. */
function stored(id: string, traceparent: string | undefined, to: 'working' | 'completed'): Stored {
  const message = { messageId: id, role: 'ROLE_USER' as const, parts: [{ text: 'hi' }] };
  const metadata = traceparent ? { [META.traceparent]: traceparent } : {};
  const now = new Date();
  const working = transitions.newStarted({ id: `s:${id}`, contextId: 'c', message, metadata, now });
  return { key: `k.${id}`, revision: 1, entry: to === 'working' ? working : transitions.complete(working, 'ok', now) };
}
const spanId = (traceparent: string | undefined) => traceparent?.split('-')[2];

it("keeps the first delivery's span as the task's when a resend is taken in while the task is open", async () => {
  const spans = new TaskSpans('echo');
  const first = spans.begin('k.a', attrs('a'));
  spans.taken('k.a');
  const again = spans.begin('k.a', attrs('a'));
  spans.discard('k.a');
  spans.observe(stored('a', first, 'completed'));
  await flushTelemetry();
  await eventually(() => otlp.spans.some((s) => s.spanId === spanId(first)) && otlp.spans.some((s) => s.spanId === spanId(again)));
  const task = otlp.spans.find((s) => s.spanId === spanId(first))!;
  expect(task.name).toBe('task');
  expect(task.events).toContain('TASK_STATE_COMPLETED');
  expect(otlp.spans.find((s) => s.spanId === spanId(again))!.name).toBe('task resend');
  expect(otlp.spans.filter((s) => s.attributes['shrooms.task_id'] === 's:a')).toHaveLength(2);
});

it('adopts the begun span when the watch brings the create before the intake says it is stored', async () => {
  const spans = new TaskSpans('echo');
  const tp = spans.begin('k.b', attrs('b'));
  spans.observe(stored('b', tp, 'working'));
  spans.taken('k.b');
  spans.observe(stored('b', tp, 'completed'));
  await flushTelemetry();
  await eventually(() => otlp.spans.some((s) => s.spanId === spanId(tp)));
  expect(otlp.spans.filter((s) => s.attributes['shrooms.task_id'] === 's:b')).toHaveLength(1);
  expect(otlp.spans.find((s) => s.spanId === spanId(tp))!.events).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
});

it("ends a task's span at the time its terminal status carries, not when the watch brings it", async () => {
  const spans = new TaskSpans('echo');
  const tp = spans.begin('k.c', attrs('c'));
  spans.taken('k.c');
  const done = stored('c', tp, 'completed');
  // A time the observing cannot be at: the span's end must come from the status.
  const at = new Date(Date.now() + 5_000);
  done.entry.task.status.timestamp = at.toISOString();
  spans.observe(done);
  await flushTelemetry();
  const span = await eventually(() => otlp.spans.find((s) => s.spanId === spanId(tp)));
  expect(span.endNs).toBe(BigInt(at.getTime()) * 1_000_000n);
});
