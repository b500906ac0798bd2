/**
 * Tracing for one process, started once by the composition root. Only when an OTLP endpoint is
 * configured (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is the
 * OpenTelemetry SDK imported and started; otherwise nothing is loaded and the API's tracer stays a
 * no-op. The SDK and the exporter read the standard OTEL_* variables themselves (headers, timeout,
 * compression, sampler, propagators, batch sizes, resource attributes, service name).
 */
import type { resources, tracing } from '@opentelemetry/sdk-node';

/** Which entry point this process is; the default service name is `mempalace-<role>`. */
export type TracingRole = 'serve' | 'worker' | 'cli' | 'mcp-stdio';

/** A started SDK: its span processor and resource also export the spans of Temporal workflows. */
export interface Tracing {
  role: TracingRole;
  spanProcessor: tracing.SpanProcessor;
  resource: resources.Resource;
  /** Exports the spans ended so far (a CLI command ends soon after). */
  flush(): Promise<void>;
}

/** Whether the environment asks for traces: an OTLP endpoint, and neither the SDK nor the traces exporter switched off. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return false;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return !(env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim()).includes('none');
}

let started: Promise<Tracing | undefined> | undefined;

/** Starts tracing once per process (the first role wins); undefined when the environment does not ask for it. */
export function startTracing(role: TracingRole): Promise<Tracing | undefined> {
  started ??= tracingRequested() ? startSdk(role) : Promise.resolve(undefined);
  return started;
}

/** The tracing this process started, if any. */
export async function activeTracing(): Promise<Tracing | undefined> {
  return started;
}

async function startSdk(role: TracingRole): Promise<Tracing> {
  const [{ NodeSDK, resources, tracing }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  // Later merges win: the SDK's defaults, then our service name, then OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
  const resource = resources.Resource.default()
    .merge(new resources.Resource({ 'service.name': `mempalace-${role}`, 'mempalace.role': role }))
    .merge(resources.envDetectorSync.detect());
  const spanProcessor = new tracing.BatchSpanProcessor(new OTLPTraceExporter());
  // No auto-instrumentation and no logs or metrics: the spans are the ones the project opens itself.
  const sdk = new NodeSDK({ resource, autoDetectResources: false, spanProcessors: [spanProcessor], instrumentations: [], logRecordProcessors: [] });
  sdk.start();
  const shutdown = () => void sdk.shutdown().catch(() => undefined);
  process.once('beforeExit', shutdown);
  return { role, spanProcessor, resource, flush: () => spanProcessor.forceFlush() };
}
