/**
 * When warden exports telemetry (src/telemetry/telemetry-settings.ts): OpenTelemetry's own
 * environment variables and `--otel`, decided before anything of OpenTelemetry loads.
 */
import { expect } from 'chai';
import { telemetrySettings } from '../../src/telemetry/telemetry-settings.js';

describe('telemetry settings', () => {
  it('is off with neither --otel nor an OTLP endpoint', () => {
    expect(telemetrySettings(false, {})).to.deep.equal({ enabled: false });
    expect(telemetrySettings(false, { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).to.deep.equal({ enabled: false });
  });

  it('is on with --otel, or with any of the OTLP endpoint variables', () => {
    for (const [flag, env] of [
      [true, {}],
      [false, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }],
      [false, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }],
      [false, { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:4318/v1/metrics' }],
    ] as const) {
      expect(telemetrySettings(flag, env), JSON.stringify(env)).to.deep.equal({ enabled: true, serviceName: 'acp-warden', traces: true, metrics: true, metricIntervalMs: 60_000 });
    }
  });

  it('is off with OTEL_SDK_DISABLED=true, whatever else says', () => {
    expect(telemetrySettings(true, { OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).to.deep.equal({ enabled: false });
    expect(telemetrySettings(true, { OTEL_SDK_DISABLED: 'false' }).enabled).to.equal(true);
  });

  it('takes OTEL_SERVICE_NAME, OTEL_METRIC_EXPORT_INTERVAL and OTEL_{TRACES,METRICS}_EXPORTER=none', () => {
    expect(telemetrySettings(true, { OTEL_SERVICE_NAME: 'my-warden', OTEL_METRIC_EXPORT_INTERVAL: '5000', OTEL_METRICS_EXPORTER: 'none' })).to.deep.equal({ enabled: true, serviceName: 'my-warden', traces: true, metrics: false, metricIntervalMs: 5000 });
    expect(telemetrySettings(true, { OTEL_TRACES_EXPORTER: 'none' })).to.include({ traces: false, metrics: true });
    expect(telemetrySettings(true, { OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' })).to.deep.equal({ enabled: false });
    expect(telemetrySettings(true, { OTEL_METRIC_EXPORT_INTERVAL: 'soon' }).enabled && telemetrySettings(true, { OTEL_METRIC_EXPORT_INTERVAL: 'soon' })).to.include({ metricIntervalMs: 60_000 });
  });
});
