/**
 * A minimal OTLP/HTTP trace receiver for tests: accepts `POST /v1/traces` in OTLP JSON (what
 * `@opentelemetry/exporter-trace-otlp-http` sends) and keeps every span with its service name.
 */
import type { Server } from 'node:http';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  events: string[];
  status?: number;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

function attrValue(v: any): unknown {
  if (!v) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue;
}

function attrs(list: any[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of list ?? []) out[a.key] = attrValue(a.value);
  return out;
}

/** Listens on `host:port` (default 127.0.0.1, any free port); `onSpan` sees each span as it comes. */
export async function startOtlpReceiver(
  opts: { host?: string; port?: number; onSpan?: (s: ReceivedSpan) => void } = {},
): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  // Asked of Node, not imported: an ES import of node:http loads undici (for its WebSocket export) into
  // every process that imports this package, `up` too (index.test.ts).
  const server: Server = process.getBuiltinModule('node:http').createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      try {
        const j = JSON.parse(body);
        for (const rs of j.resourceSpans ?? []) {
          const service = String(attrs(rs.resource?.attributes)['service.name'] ?? '');
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? []) {
              const span: ReceivedSpan = {
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
                name: s.name,
                startNs: BigInt(s.startTimeUnixNano),
                endNs: BigInt(s.endTimeUnixNano),
                attributes: attrs(s.attributes),
                events: (s.events ?? []).map((e: { name: string }) => e.name),
                status: s.status?.code,
              };
              spans.push(span);
              opts.onSpan?.(span);
            }
        }
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((r) => server.listen(opts.port ?? 0, host, () => r()));
  const port = (server.address() as { port: number }).port;
  return { url: `http://${host}:${port}`, spans, close: () => new Promise((r) => server.close(() => r())) };
}
