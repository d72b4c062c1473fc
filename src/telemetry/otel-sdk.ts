/**
 * The OpenTelemetry SDK and OTLP/HTTP exporters, loaded only when telemetry is on
 * (telemetry-settings.ts). They are optional: warden depends on `@opentelemetry/api` alone,
 * and a user who wants telemetry installs the SDK packages next to warden
 * (docs/observability.md lists them with the versions that run on Node 20). Missing, they
 * are an {@link OtelSdkMissingError} naming the command that installs them.
 *
 * The tracer provider is registered globally: that also installs the AsyncLocalStorage
 * context manager (the context a spawn happens in is the span of the request that caused it:
 * spawn-trace-env.ts) and the W3C trace context propagator (`_meta.traceparent`).
 */
import { context, diag, DiagLogLevel, metrics, propagation, trace, type DiagLogger, type Meter, type Tracer } from '@opentelemetry/api';
import { instrumentationScope } from './names.js';
import type { TelemetrySettings } from './telemetry-settings.js';

/** The SDK packages, with the versions that run on Node >= 20.6 (the newer lines need Node 22.15). */
export const otelSdkPackages = [
  '@opentelemetry/sdk-trace-node@2.12.0',
  '@opentelemetry/exporter-trace-otlp-http@0.223.0',
  '@opentelemetry/sdk-metrics@2.12.0',
  '@opentelemetry/exporter-metrics-otlp-http@0.223.0',
  '@opentelemetry/resources@2.12.0',
] as const;

/** The SDK is not installed where warden runs. */
export class OtelSdkMissingError extends Error {
  override readonly name = 'OtelSdkMissingError';
}

/** What the loaded SDK gives warden. */
export interface OtelSdk {
  /** `undefined` with `OTEL_TRACES_EXPORTER=none`. */
  readonly tracer: Tracer | undefined;
  /** `undefined` with `OTEL_METRICS_EXPORTER=none`. */
  readonly meter: Meter | undefined;
  /** Exports what is left (spans, the metrics' last values) and stops, within `timeoutMs`, then unregisters the globals; whether the export finished in time. */
  shutdown(timeoutMs: number): Promise<boolean>;
}

/** Loads and starts the SDK (its diagnostics on stderr as `<command>: otel <level>: ...`); rejects with {@link OtelSdkMissingError} when it is not installed. */
export async function loadOtelSdk(settings: Extract<TelemetrySettings, { enabled: true }>, command: string): Promise<OtelSdk> {
  // Exporter errors (a collector that is down) go to stderr, never stdout (the protocol channel).
  diag.setLogger(stderrDiagLogger(command), { logLevel: diagLevelOf(process.env.OTEL_LOG_LEVEL), suppressOverrideMessage: true });
  let modules;
  try {
    modules = await Promise.all([
      import('@opentelemetry/resources'),
      settings.traces ? import('@opentelemetry/sdk-trace-node') : undefined,
      settings.traces ? import('@opentelemetry/exporter-trace-otlp-http') : undefined,
      settings.metrics ? import('@opentelemetry/sdk-metrics') : undefined,
      settings.metrics ? import('@opentelemetry/exporter-metrics-otlp-http') : undefined,
    ]);
  } catch (error) {
    throw new OtelSdkMissingError(`the OpenTelemetry SDK is not installed (${(error as Error).message.split('\n')[0]}); install it next to acp-warden: npm install ${otelSdkPackages.join(' ')}`, { cause: error });
  }
  const [resources, traceNode, traceExporter, sdkMetrics, metricExporter] = modules;
  const resource = resources.resourceFromAttributes({ 'service.name': settings.serviceName }).merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const stops: Array<() => Promise<void>> = [];
  let tracer: Tracer | undefined;
  if (traceNode && traceExporter) {
    const provider = new traceNode.NodeTracerProvider({ resource, spanProcessors: [new traceNode.BatchSpanProcessor(new traceExporter.OTLPTraceExporter())] });
    provider.register();
    tracer = provider.getTracer(instrumentationScope);
    stops.push(() => provider.shutdown());
  }
  let meter: Meter | undefined;
  if (sdkMetrics && metricExporter) {
    const reader = new sdkMetrics.PeriodicExportingMetricReader({ exporter: new metricExporter.OTLPMetricExporter(), exportIntervalMillis: settings.metricIntervalMs });
    const provider = new sdkMetrics.MeterProvider({ resource, readers: [reader] });
    metrics.setGlobalMeterProvider(provider);
    meter = provider.getMeter(instrumentationScope);
    stops.push(() => provider.shutdown());
  }
  return {
    tracer,
    meter,
    async shutdown(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      // A collector that does not answer must not keep warden from exiting.
      const finished = await Promise.race([Promise.allSettled(stops.map((stop) => stop())).then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
      clearTimeout(timer);
      // The process goes on without OpenTelemetry (a benchmark, a test): no global provider, context manager or propagator left behind.
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
      return finished;
    },
  };
}

/** OpenTelemetry's own problems (an export that failed), as `warden acp: otel <level>: ...` lines on stderr. */
function stderrDiagLogger(command: string): DiagLogger {
  const write = (level: string) => (message: string, ...args: unknown[]) => {
    const rest = args.map((arg) => (arg instanceof Error ? arg.message : typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ');
    process.stderr.write(`${command}: otel ${level}: ${message}${rest ? ` ${rest}` : ''}\n`);
  };
  return { error: write('error'), warn: write('warn'), info: write('info'), debug: write('debug'), verbose: write('verbose') };
}

/** `OTEL_LOG_LEVEL` (default `warn`). */
function diagLevelOf(value: string | undefined): DiagLogLevel {
  switch (value?.trim().toLowerCase()) {
    case 'none':
      return DiagLogLevel.NONE;
    case 'error':
      return DiagLogLevel.ERROR;
    case 'info':
      return DiagLogLevel.INFO;
    case 'debug':
      return DiagLogLevel.DEBUG;
    case 'verbose':
    case 'all':
      return DiagLogLevel.ALL;
    default:
      return DiagLogLevel.WARN;
  }
}
