/**
 * `acp-warden/telemetry`: OpenTelemetry traces and metrics for a host a program embeds, the
 * same spans and metrics `warden acp` and `warden serve` export (docs/observability.md).
 *
 * acp-warden depends on `@opentelemetry/api` only; the SDK and OTLP/HTTP exporters are an
 * optional install ({@link otelSdkPackages}), loaded by {@link startTelemetry}. OpenTelemetry's
 * own `OTEL_*` variables apply (endpoint, headers, service name, sampler, ...).
 *
 * @packageDocumentation
 */
import { startTelemetry as startWithSettings, type Telemetry } from './telemetry.js';
import { telemetrySettings } from './telemetry-settings.js';

export type { Telemetry } from './telemetry.js';
export type { HostTelemetry } from './host-telemetry.js';
export type { EditorTapOptions } from './editor-tap.js';
export { OtelSdkMissingError, otelSdkPackages } from './otel-sdk.js';
export { spanNames, attributes, metricNames } from './names.js';

/** Options of {@link startTelemetry}. */
export interface TelemetryStartOptions {
  /**
   * Export even when no `OTEL_EXPORTER_OTLP_ENDPOINT` (nor `_TRACES_` / `_METRICS_` one) is set,
   * then to `http://localhost:4318`, as `--otel` does (default `true`). `false`: only when one
   * of those variables is set.
   */
  readonly otel?: boolean;
  /** How OpenTelemetry's diagnostic lines on stderr start (`<name>: otel warn: ...`); default `acp-warden`. */
  readonly name?: string;
}

/**
 * Starts OpenTelemetry for one host: loads the SDK, registers its tracer and meter providers
 * globally (with the W3C propagator and the AsyncLocalStorage context manager), and gives the
 * {@link Telemetry} to pass to `createHost({ telemetry })`. The host then exports a span per
 * session, turn (the program's prompts too), tool call, permission wait, agent restart and
 * recovery, and the metrics of sessions, turns, restarts and journal writes.
 *
 * Resolves `undefined` when telemetry is off: `OTEL_SDK_DISABLED=true`, both
 * `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER` are `none`, or `otel: false` with no
 * endpoint variable. Rejects with {@link OtelSdkMissingError} (its message names the
 * `npm install` line) when the SDK is not installed. One telemetry per process at a time: the
 * providers are global. Call `telemetry.shutdown()` after `host.stop()`: it ends the spans
 * still open and exports what is left (3 s at most), then unregisters the globals.
 *
 * @example
 * ```ts
 * import { createHost } from 'acp-warden';
 * import { startTelemetry } from 'acp-warden/telemetry';
 *
 * // OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 (or the default, localhost:4318)
 * const telemetry = await startTelemetry();
 * const host = createHost({ telemetry });
 * const session = await host.newSession({ agent: 'demo', cwd: process.cwd() });
 * await session.prompt('hello').result; // an acp_warden.turn span, a child of acp_warden.session
 * await host.stop();
 * await telemetry?.shutdown();
 * ```
 */
export async function startTelemetry(options: TelemetryStartOptions = {}): Promise<Telemetry | undefined> {
  const settings = telemetrySettings(options.otel ?? true);
  if (!settings.enabled) return undefined;
  return startWithSettings(settings, options.name ?? 'acp-warden');
}
