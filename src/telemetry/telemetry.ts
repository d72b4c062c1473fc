/**
 * warden's OpenTelemetry, started by a command (`warden acp`) when telemetry-settings.ts says
 * it is on: the SDK loaded (otel-sdk.ts), the session traces and metrics (session-traces.ts)
 * fed by the editor's connection (editor-tap.ts) and the host's events, the journal timed
 * (timed-journal.ts), the trace context handed to agent processes (spawn-trace-env.ts).
 * Load this module only when telemetry is on: it imports `@opentelemetry/api`.
 */
import { diag } from '@opentelemetry/api';
import { tapEditorTransport } from './editor-tap.js';
import type { HostTelemetry } from './host-telemetry.js';
import { loadOtelSdk } from './otel-sdk.js';
import { SessionTraces } from './session-traces.js';
import { propagateToSpawns } from './spawn-trace-env.js';
import type { TelemetrySettings } from './telemetry-settings.js';
import { timedJournal } from './timed-journal.js';
import { wardenMetrics } from './warden-metrics.js';

/** How long exiting waits for the last export, at most (a collector that is down must not hold warden, nor the editor that closed it). */
export const telemetryShutdownMs = 3000;

/**
 * Telemetry running for one host: give it to `createHost({ telemetry })`, which taps every
 * connection it serves, times its journal and hears its events (or do that by hand, as
 * `warden acp` does: `tapEditor` its stdio, `timeJournal` the journal, `host.on(hostListener)`).
 * Call `shutdown()` after `host.stop()`.
 */
export interface Telemetry extends HostTelemetry {
  /** Ends the open spans, exports what is left, removes the spawn hook (bounded by {@link telemetryShutdownMs}). */
  shutdown(): Promise<void>;
}

/** Starts telemetry for `command` (`warden acp`, `warden serve`: how its stderr lines start); rejects with an `OtelSdkMissingError` when the SDK is not installed. */
export async function startTelemetry(settings: Extract<TelemetrySettings, { enabled: true }>, command: string): Promise<Telemetry> {
  const sdk = await loadOtelSdk(settings, command);
  const metrics = sdk.meter ? wardenMetrics(sdk.meter) : undefined;
  const traces = new SessionTraces(sdk.tracer, metrics);
  const unhook = sdk.tracer ? propagateToSpawns(traces) : () => {};
  let stopped: Promise<void> | undefined;
  return {
    tapEditor: (transport, options) => tapEditorTransport(transport, traces, options),
    timeJournal: (journal) => (metrics ? timedJournal(journal, metrics.journalDuration) : journal),
    hostListener: (event) => traces.hostEvent(event),
    shutdown() {
      stopped ??= (async () => {
        unhook();
        traces.endAll();
        if (!(await sdk.shutdown(telemetryShutdownMs))) {
          diag.warn(`the last export did not finish within ${telemetryShutdownMs / 1000} s (is the collector at ${process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318'} up?); what it held is lost`);
        }
      })();
      return stopped;
    },
  };
}
