/**
 * Whether warden exports telemetry, decided from OpenTelemetry's own environment variables and
 * `--otel`, before anything of OpenTelemetry is loaded: without an endpoint and without
 * `--otel`, telemetry costs nothing (no module loaded, no hook set).
 *
 * - on when `--otel` is given, or `OTEL_EXPORTER_OTLP_ENDPOINT`,
 *   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is set;
 * - off, whatever else says, when `OTEL_SDK_DISABLED=true`;
 * - traces unless `OTEL_TRACES_EXPORTER=none`, metrics unless `OTEL_METRICS_EXPORTER=none`;
 * - `service.name` from `OTEL_SERVICE_NAME`, default `acp-warden`; the exporters read the
 *   rest themselves (endpoints, headers, timeout).
 */
import { defaultServiceName } from './names.js';

/** What telemetry was asked for. */
export type TelemetrySettings =
  | { readonly enabled: false }
  | {
      readonly enabled: true;
      readonly serviceName: string;
      readonly traces: boolean;
      readonly metrics: boolean;
      /** `OTEL_METRIC_EXPORT_INTERVAL`, ms (default 60000); the last values are exported at exit in any case. */
      readonly metricIntervalMs: number;
    };

/** The settings for `env` (default `process.env`) and the `--otel` flag. */
export function telemetrySettings(otelFlag: boolean, env: Readonly<Record<string, string | undefined>> = process.env): TelemetrySettings {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { enabled: false };
  const endpoint = [env.OTEL_EXPORTER_OTLP_ENDPOINT, env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT].some((value) => value !== undefined && value.trim() !== '');
  if (!otelFlag && !endpoint) return { enabled: false };
  const traces = !exporterNone(env.OTEL_TRACES_EXPORTER);
  const metrics = !exporterNone(env.OTEL_METRICS_EXPORTER);
  if (!traces && !metrics) return { enabled: false };
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return {
    enabled: true,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultServiceName,
    traces,
    metrics,
    metricIntervalMs: Number.isFinite(interval) && interval > 0 ? interval : 60_000,
  };
}

/** `none` among an `OTEL_*_EXPORTER` list (`otlp`, the default, is the only exporter warden loads). */
function exporterNone(value: string | undefined): boolean {
  return value !== undefined && value.split(',').some((name) => name.trim().toLowerCase() === 'none');
}
