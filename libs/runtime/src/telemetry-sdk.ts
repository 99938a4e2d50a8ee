/** The OpenTelemetry SDK's tracer provider with the OTLP/HTTP exporter; imported only when tracing is configured. */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

/** A registered provider exporting to the endpoint the `OTEL_*` variables name. */
export function tracerProvider(serviceName: string, env: Record<string, string | undefined>): NodeTracerProvider {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME ?? serviceName, [ATTR_SERVICE_VERSION]: '0.1.0' }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY ?? 1000) }),
    ],
  });
  provider.register();
  return provider;
}
