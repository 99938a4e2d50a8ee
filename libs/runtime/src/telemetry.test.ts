/**
 * Tracing off (no OTEL_* exporter): the spans are no-ops that pass their parent's trace on, as the
 * OpenTelemetry API's no-op does, and no OpenTelemetry module is loaded. Tracing on is shown end to
 * end by test/e2e/traces.test.ts and tasks/spans.test.ts of the bridge.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  activeContext,
  contextFromHeaders,
  contextFromTraceparent,
  contextWithSpan,
  inSpan,
  inTrace,
  startSpan,
  traceHeaders,
  traceparentOf,
} from './telemetry.js';

const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('telemetry with tracing off', () => {
  it('passes a valid traceparent on through a span, with its tracestate', async () => {
    const parent = contextFromTraceparent(TP, 'vendor=x');
    expect(inTrace(parent)).toBe(true);
    const headers = await inSpan('probe', { parent }, async (_span, ctx) => traceHeaders(ctx));
    expect(headers).toEqual({ traceparent: TP, tracestate: 'vendor=x' });
    expect(traceparentOf(contextWithSpan(startSpan('task', {}, parent), parent))).toBe(TP);
    expect(traceHeaders(contextFromHeaders({ traceparent: [TP], tracestate: undefined }))).toEqual({ traceparent: TP });
  });

  it('starts no trace of its own and ignores malformed, all-zero, version-ff and oversized headers', async () => {
    expect(traceparentOf()).toBeUndefined();
    expect(inTrace(activeContext())).toBe(false);
    expect(await inSpan('root', {}, async (_s, ctx) => traceHeaders(ctx))).toEqual({});
    for (const bad of [
      'nonsense',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      `${TP}-extra`,
      TP.toUpperCase(),
      42,
    ])
      expect(traceHeaders(contextFromTraceparent(bad)), String(bad)).toEqual({});
    expect(traceHeaders(contextFromTraceparent(TP, 'k=v,'.repeat(200)))).toEqual({ traceparent: TP });
  });

  it('loads no OpenTelemetry module unless an exporter is configured', async () => {
    const src = pathToFileURL(fileURLToPath(new URL('./telemetry.ts', import.meta.url))).href;
    const probe = `
      import { createRequire } from 'node:module';
      const t = await import(${JSON.stringify(src)});
      await t.initTelemetry('probe');
      await t.inSpan('x', { parent: t.contextFromTraceparent(${JSON.stringify(TP)}) }, async (_s, ctx) => t.traceHeaders(ctx));
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('@opentelemetry'));
      process.stdout.write(String(loaded.length));
      await t.flushTelemetry();
      process.exit(0);`;
    const run = async (env: Record<string, string>) => {
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
        env: { ...clean, ...env },
        timeout: 60_000,
      });
      return Number(stdout.trim());
    };
    expect(await run({})).toBe(0);
    // The same probe sees them once tracing is configured (nothing listens there: export is batched).
    expect(await run({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_SCHEDULE_DELAY: '60000' })).toBeGreaterThan(0);
  });
});
